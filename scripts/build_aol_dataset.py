"""Build ``datasets/aol_queries.tsv.gz`` from the shared AOL query histogram (build time only).

Reads ``aol_query6_counts.tsv.xz`` from the ``datasets`` folder of the raw-data folder
(``--shared``): the AOL-2006 query histogram, queries cut or space-padded to 6 bytes, one query
per user, from Wang et al.'s PEM code (provenance in ``datasets/aol_queries.md``). It checks it
against its published sha256 and statistics, and writes
the same bytes gzip-compressed with a fixed timestamp, so that rebuilding gives an identical file.

Usage: ``python scripts/build_aol_dataset.py [--shared RAW]`` from the repository root (default
RAW: the folder ``shared`` beside the repository).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import lzma
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "datasets/aol_query6_counts.tsv.xz"
TARGET = ROOT / "datasets" / "aol_queries.tsv.gz"
SHA256 = "e3aeef15b6aa022a6dc9f508cf505fdc041cc0bc5343e1e98f31432619088408"
DISTINCT, USERS = 120_978, 657_427


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared folder")
    args = parser.parse_args(argv)
    raw = lzma.decompress((args.shared / SOURCE).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != SHA256:
        sys.exit(f"unexpected content: sha256 {digest}, expected {SHA256}")
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    counts = [int(line.rsplit(b"\t", 1)[1]) for line in lines]
    if len(lines) != DISTINCT or sum(counts) != USERS:
        sys.exit(f"unexpected statistics: {len(lines)} values, {sum(counts)} users")
    if any(len(line.rsplit(b"\t", 1)[0]) != 6 for line in lines):
        sys.exit("a key is not exactly 6 bytes")
    with TARGET.open("wb") as fh, gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    print(f"wrote {TARGET.relative_to(ROOT)} ({TARGET.stat().st_size:,} bytes): {DISTINCT:,} queries, {USERS:,} users")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
