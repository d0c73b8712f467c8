"""Build the shipped FIMI histograms (``datasets/retail.*``, ``datasets/kosarak-head.*``).

Build time only: reads the raw FIMI files (the FIMI repository's downloads) from a raw-data folder
(``--shared``, not part of a clone), checks their sha256 against the recorded values, flattens
transactions to one user per item occurrence, and writes for each dataset

- ``datasets/<name>.csv.gz``: ``item,count`` (FIMI item id, occurrences), one line per distinct
  item, ascending id; gzip with a zero timestamp, so rebuilding gives identical bytes;
- ``datasets/<name>.md``: the provenance note (origin, citation, terms, checksums, statistics).

Usage: ``python scripts/build_fimi_datasets.py [--shared RAW/datasets] [--out datasets]`` (default
RAW: the folder ``shared`` beside the repository)
(``--check`` rebuilds in memory and fails if the shipped files differ).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins" / "datasets"))
from _fimi import histogram, parse_fimi, read_bytes  # noqa: E402

SOURCES = {
    "retail": {
        "file": "retail.dat.xz",
        "sha256": "e924ef6e280f2bffa9f8bb930e7a3c6b77c8421f8870c8036d1f7f5aaae96147",
        "title": "Retail (FIMI retail market-basket data, complete)",
        "partial": False,
        "origin": (
            "FIMI repository (Frequent Itemset Mining Implementations, fimi.uantwerpen.be/data/), "
            "file `retail.dat`: anonymized receipts of a Belgian retail store, donated by Tom Brijs. "
            "The copy used here was taken byte for byte from the public GitHub repository "
            "`JyotsnaT/Data-Mining` (path `retail.dat`)."
        ),
        "citation": (
            'T. Brijs, G. Swinnen, K. Vanhoof, G. Wets, "Using Association Rules for Product '
            'Assortment Decisions: A Case Study", KDD 1999, pp. 254-260.'
        ),
        "terms": (
            "FIMI hosts the file for research and benchmarking; there is no explicit license. Cite Brijs et al. (1999)."
        ),
        "notes": (
            "The transaction and item counts match the published figures exactly. [JG19] reports "
            "908,576 occurrences, one fewer than this copy (908,577); no second complete copy was "
            "found to tell which is right. The difference is negligible for every experiment."
        ),
    },
    "kosarak-head": {
        "file": "kosarak_head36682.dat.xz",
        "sha256": "6307352eb059e11daae3e69e70d9abbee566ea07dd60dee65e8219d6c55da523",
        "title": "Kosarak head (PARTIAL SAMPLE: the first 36,682 of 990,002 Kosarak transactions)",
        "partial": True,
        "origin": (
            "FIMI repository, file `kosarak.dat`: anonymized click-stream data of a Hungarian "
            "online news portal, donated by Ferenc Bodon. The full file has 990,002 transactions, "
            "41,270 items and 8,019,015 occurrences. Only a truncated public copy was available "
            "(GitHub repository `berkin768/Apriori-Method-Analysis`, path `kosarak.dat`, which ends "
            "mid-line); its first 36,682 complete lines were kept. They are believed to be a prefix "
            "of the canonical file (the opening lines and the item ranking 6 > 3 > 11 > 1 > 7 agree) "
            "but this has not been verified byte for byte."
        ),
        "citation": ("FIMI repository: B. Goethals and M. J. Zaki, FIMI'03 workshop; data donated by Ferenc Bodon."),
        "terms": "As for FIMI: research and benchmarking, no explicit license.",
        "notes": (
            "**This is a partial sample (about 3.7% of the transactions), not Kosarak.** Use it for "
            "smoke tests and small runs only; it does not reproduce published Kosarak numbers. The "
            "`kosarak` dataset plugin reads a full copy of the file if you provide one. One "
            "transaction lists an item twice; both occurrences are counted."
        ),
    },
}


def gzip_bytes(text: str) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0, compresslevel=9) as gz:
        gz.write(text.encode("ascii"))
    return out.getvalue()


def build(name: str, meta: dict, shared: Path) -> tuple[bytes, str]:
    raw = read_bytes(shared / meta["file"])
    digest = hashlib.sha256(raw).hexdigest()
    if digest != meta["sha256"]:
        raise SystemExit(f"{meta['file']}: sha256 {digest} differs from the recorded {meta['sha256']}")
    stats = parse_fimi(raw, meta["file"])
    counts, labels = histogram(stats.items, "observed")
    csv = "item,count\n" + "".join(f"{lab},{c}\n" for lab, c in zip(labels, counts))
    payload = gzip_bytes(csv)
    n, d = int(counts.sum()), int(counts.size)
    order = np.lexsort((np.arange(d), -counts))
    top = ", ".join(f"{labels[i]} ({counts[i]:,})" for i in order[:5])
    q = np.percentile(counts, [50, 90, 99])
    lines = [
        f"# {meta['title']}",
        "",
        f"Shipped as `{name}.csv.gz` (`item,count`: FIMI item id and its number of occurrences, one line",
        "per distinct item, ascending id). Built by `scripts/build_fimi_datasets.py` from the raw FIMI file;",
        "each item occurrence is one user (the one-item-per-user view of [JG19] and [W17]).",
        "",
        "## Origin",
        "",
        meta["origin"],
        "",
        "## Citation",
        "",
        meta["citation"],
        "",
        "## Terms",
        "",
        meta["terms"],
        "",
        "## Checksums",
        "",
        f"- raw file (uncompressed FIMI text): {len(raw):,} bytes, sha256 `{digest}`",
        f"- shipped `{name}.csv.gz`: sha256 `{hashlib.sha256(payload).hexdigest()}`",
        "",
        "## Statistics (computed by the build script)",
        "",
        f"- transactions: {stats.transactions:,}" + (" (partial sample)" if meta["partial"] else ""),
        f"- users n (item occurrences): {n:,}",
        f"- items d (distinct item ids that occur): {d:,}; ids {labels[0]}..{labels[-1]}",
        f"- largest counts: {top}",
        f"- items seen once: {int((counts == 1).sum()):,}; median count {q[0]:g}, 90th percentile {q[1]:g}, "
        f"99th percentile {q[2]:g}, mean {n / d:.2f}",
        f"- transactions listing an item twice: {stats.repeated_in_transaction}",
        "",
        "## Notes",
        "",
        meta["notes"],
        "",
    ]
    return payload, "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    parser.add_argument("--out", type=Path, default=ROOT / "datasets")
    parser.add_argument("--check", action="store_true", help="fail if the shipped files differ")
    args = parser.parse_args(argv)
    status = 0
    for name, meta in SOURCES.items():
        payload, note = build(name, meta, args.shared)
        targets = {args.out / f"{name}.csv.gz": payload, args.out / f"{name}.md": note.encode()}
        for path, content in targets.items():
            if args.check:
                if not path.is_file() or path.read_bytes() != content:
                    print(f"{path}: differs from a fresh build", file=sys.stderr)
                    status = 1
            else:
                path.write_bytes(content)
                print(f"wrote {path} ({len(content):,} bytes)")
    return status


if __name__ == "__main__":
    sys.exit(main())
