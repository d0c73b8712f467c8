"""Build ``datasets/adult.csv`` from the UCI Adult files (build time only).

Reads ``adult.data.xz`` and ``adult.test.xz`` from the ``datasets`` folder of the raw-data folder
(``--shared``): the UCI "Adult" / Census Income downloads, recompressed with xz (provenance in
``datasets/adult.md``). It checks them against their published sha256 sums and record
counts, and writes the categorical histogram of

    age (8 buckets, [MHS18]'s) x sex (2) x marital status (7) x income (2)  =  224 categories

over all 48,842 records, one line ``label,count`` per category in row-major order of those four
attributes (the item index of a category is its line number, from 0). The age buckets are those of
[MHS18]'s USCensus1990 experiment: 0, 1-12, 13-19, 20-29, 30-39, 40-49, 50-64, 65+; Adult holds
ages 17-90 only, so the first two buckets are empty. None of the four attributes has missing values.

Usage: ``python scripts/build_adult_dataset.py [--shared RAW]`` from the repository root (default
RAW: the folder ``shared`` beside the repository).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import lzma
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "datasets" / "adult.csv"
SOURCES = {
    "datasets/adult.data.xz": ("5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d", 32_561),
    "datasets/adult.test.xz": ("a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05", 16_281),
}

AGE_EDGES = (0, 1, 13, 20, 30, 40, 50, 65)  # lower ends of [MHS18]'s 8 age buckets
AGE_LABELS = ("0", "1-12", "13-19", "20-29", "30-39", "40-49", "50-64", "65+")
SEXES = ("Male", "Female")
MARITAL = (
    "Married-civ-spouse",
    "Widowed",
    "Divorced",
    "Separated",
    "Never-married",
    "Married-spouse-absent",
    "Married-AF-spouse",
)
INCOMES = ("<=50K", ">50K")


def age_bucket(age: int) -> int:
    bucket = 0
    for i, edge in enumerate(AGE_EDGES):
        if age >= edge:
            bucket = i
    return bucket


def category(fields: list[str]) -> int:
    """Row-major index of (age bucket, sex, marital status, income)."""
    a = age_bucket(int(fields[0]))
    s = SEXES.index(fields[9])
    m = MARITAL.index(fields[5])
    i = INCOMES.index(fields[14].rstrip("."))  # adult.test writes "<=50K." and ">50K."
    return ((a * len(SEXES) + s) * len(MARITAL) + m) * len(INCOMES) + i


def labels() -> list[str]:
    return [
        f"age={a}|sex={s.lower()}|marital={m.lower()}|income={i}"
        for a, s, m, i in itertools.product(AGE_LABELS, SEXES, MARITAL, INCOMES)
    ]


def raw_records(shared: Path) -> Iterator[list[str]]:
    """The 15 stripped fields of every record of both raw files, each file checked against its
    sha256 sum and record count (exits on a mismatch). Shared with build_adult_attributes.py."""
    for source, (sha, records) in SOURCES.items():
        raw = lzma.decompress((shared / source).read_bytes())
        digest = hashlib.sha256(raw).hexdigest()
        if digest != sha:
            sys.exit(f"{source}: unexpected content: sha256 {digest}, expected {sha}")
        seen = 0
        for line in raw.decode("ascii").splitlines():
            fields = [f.strip() for f in line.split(",")]
            if len(fields) != 15:  # blank lines and adult.test's "|1x3 Cross validator"
                continue
            seen += 1
            yield fields
        if seen != records:
            sys.exit(f"{source}: {seen} records, expected {records}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared folder")
    args = parser.parse_args(argv)
    names = labels()
    counts = [0] * len(names)
    for fields in raw_records(args.shared):
        counts[category(fields)] += 1
    with TARGET.open("w", encoding="ascii", newline="\n") as fh:
        fh.write("item,count\n")
        for name, count in zip(names, counts):
            fh.write(f"{name},{count}\n")
    print(f"wrote {TARGET.relative_to(ROOT)}: {len(names)} categories, {sum(counts):,} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
