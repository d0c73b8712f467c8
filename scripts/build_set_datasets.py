"""Build the shipped set-valued FIMI datasets (``datasets/retail-sets.*``, ``datasets/kosarak-head-sets.*``).

Build time only: reads the raw FIMI files from a raw-data folder (``--shared``, not part of a
clone; the same files and checksums as ``build_fimi_datasets.py``), keeps each transaction as one
user holding the *set* of its items (an item listed twice in a transaction counts once), and writes

- ``datasets/<name>.sets.gz``: gzip (zero timestamp: rebuilding gives identical bytes) of
  ``b"LDPBSETS1\\n"``, then little-endian ``uint32`` n (users), m (members), d (distinct items),
  then ``d`` uint32 item ids (histogram position -> FIMI id; positions rank the items by how many
  users hold them, most first, ties by id, so that deltas are small), ``n`` uint16 set sizes, and
  ``m`` uint16 deltas — each user's item positions ascending, the first from 0, each next one from
  the one before — stored as two byte planes (all low bytes, then all high bytes: gzip compresses
  them better) (read by ``plugins/datasets/sets.py``);
- ``datasets/<name>.md``: the provenance note.

Usage: ``python scripts/build_set_datasets.py [--shared RAW/datasets] [--out datasets] [--check]``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import lzma
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from build_fimi_datasets import SOURCES as ITEM_SOURCES  # noqa: E402

MAGIC = b"LDPBSETS1\n"
DATASETS = {"retail-sets": "retail", "kosarak-head-sets": "kosarak-head"}


def read_transactions(path: Path, sha256: str) -> list[list[int]]:
    """The transactions of a raw FIMI file (xz), each its distinct item ids, checksum checked."""
    data = lzma.decompress(path.read_bytes())
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise SystemExit(f"{path}: sha256 {digest}, expected {sha256}")
    out = []
    for line in data.decode("ascii").splitlines():
        ids = sorted({int(t) for t in line.split()})
        if ids:
            out.append(ids)
    return out


def encode(transactions: list[list[int]]) -> tuple[bytes, dict]:
    """The ``.sets.gz`` bytes and statistics."""
    flat = np.fromiter((i for t in transactions for i in t), dtype=np.int64)
    distinct, held = np.unique(flat, return_counts=True)
    ids = distinct[np.lexsort((distinct, -held))]  # position -> id, most held first
    rank = np.empty(ids.size, dtype=np.int64)
    rank[np.lexsort((distinct, -held))] = np.arange(ids.size)
    sizes = np.array([len(t) for t in transactions], dtype=np.int64)
    rows = np.repeat(np.arange(sizes.size), sizes)
    positions = rank[np.searchsorted(distinct, flat)]
    positions = positions[np.lexsort((positions, rows))]  # ascending within each user
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    deltas = np.diff(positions, prepend=0)
    deltas[starts] = positions[starts]
    assert sizes.max() < 1 << 16 and deltas.max() < 1 << 16 and deltas.min() >= 0
    raw = io.BytesIO()
    raw.write(MAGIC)
    raw.write(np.array([sizes.size, positions.size, ids.size], dtype="<u4").tobytes())
    raw.write(ids.astype("<u4").tobytes())
    raw.write(sizes.astype("<u2").tobytes())
    raw.write(deltas.astype("<u2").view(np.uint8).reshape(-1, 2).T.tobytes())
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as fh:
        fh.write(raw.getvalue())
    counts = np.bincount(positions, minlength=ids.size)
    top = np.argsort(-counts, kind="stable")[:5]
    stats = {
        "users": int(sizes.size),
        "members": int(positions.size),
        "items": int(ids.size),
        "mean_size": float(sizes.mean()),
        "max_size": int(sizes.max()),
        "size_p50": float(np.percentile(sizes, 50)),
        "size_p90": float(np.percentile(sizes, 90)),
        "size_p99": float(np.percentile(sizes, 99)),
        "top": ", ".join(f"{int(ids[i])} ({int(counts[i]):,} users)" for i in top),
    }
    return buf.getvalue(), stats


def note(name: str, item_name: str, meta: dict, stats: dict, payload: bytes) -> str:
    return f"""# {meta["title"].replace("(", "as sets (", 1) if "(" in meta["title"] else meta["title"] + " as sets"}

Shipped as `{name}.sets.gz`: one user per transaction, holding the **set** of its items (record
`set`, docs/data-model.md). Built by `scripts/build_set_datasets.py` from the same raw file as
`{item_name}` ([{item_name}.md]({item_name}.md)); the format is in the script's docstring
(set sizes and delta-encoded item positions, uint16, gzip). An item listed twice in one
transaction is held once. Item positions rank the distinct FIMI ids that occur by how many users
hold them (most first, ties by id); the item labels are the ids.

## Origin

{meta["origin"]}

## Citation

{meta["citation"]}

## Terms

{meta["terms"]}

## Checksums

- raw file (uncompressed FIMI text): sha256 `{meta["sha256"]}`
- shipped `{name}.sets.gz`: {len(payload):,} bytes, sha256 `{hashlib.sha256(payload).hexdigest()}`

## Statistics (computed by the build script)

- users n (transactions): {stats["users"]:,}
- items d (distinct ids that occur): {stats["items"]:,}; item occurrences (set members): {stats["members"]:,}
- set sizes: mean {stats["mean_size"]:.2f}, median {stats["size_p50"]:g}, 90th percentile {stats["size_p90"]:g}, 99th percentile {stats["size_p99"]:g}, largest {stats["max_size"]:,}
- most frequent items (users holding them): {stats["top"]}
{"" if not meta["partial"] else chr(10) + "**A partial sample** (the first 36,682 of Kosarak's 990,002 transactions): it does not reproduce published Kosarak numbers." + chr(10)}"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=ROOT / "datasets")
    parser.add_argument("--check", action="store_true", help="fail if the shipped files differ")
    args = parser.parse_args(argv)
    differ = []
    for name, item_name in DATASETS.items():
        meta = ITEM_SOURCES[item_name]
        payload, stats = encode(read_transactions(args.shared / meta["file"], meta["sha256"]))
        text = note(name, item_name, meta, stats, payload)
        for path, content in ((args.out / f"{name}.sets.gz", payload), (args.out / f"{name}.md", text.encode())):
            if args.check:
                if not path.exists() or path.read_bytes() != content:
                    differ.append(str(path))
            else:
                path.write_bytes(content)
        print(f"{name}: {stats['users']:,} users, {stats['items']:,} items, {len(payload):,} bytes")
    if differ:
        print("differ from a rebuild: " + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
