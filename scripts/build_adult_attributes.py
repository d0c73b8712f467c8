"""Build ``datasets/adult-attributes.tsv.gz`` from the UCI Adult files (build time only).

Reads ``adult.data.xz`` and ``adult.test.xz`` from the ``datasets`` folder of the raw-data folder
(``--shared``), checks them against their sha256 sums and record counts (as
``scripts/build_adult_dataset.py`` does), and writes the 48,842 records as tuples of ten
categorical attributes (provenance and format in ``datasets/adult-attributes.md``):

    age (7 buckets) workclass (9) education (16) marital (7) occupation (15) relationship (6)
    race (5) sex (2) native-country (42) income (2)

A missing value (``?``: workclass, occupation, native-country) is a value of its own. Each
attribute's values are sorted (bytes order), except age, whose buckets run young to old. The file
lists the distinct tuples with their counts (a joint histogram: 19,145 lines instead of 48,842),
gzip-compressed with no timestamp, so a rebuild is byte for byte the same.

Usage: ``python scripts/build_adult_attributes.py [--shared RAW]`` from the repository root.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import io
from pathlib import Path

from build_adult_dataset import raw_records  # a sibling script: run from scripts/ or with it on sys.path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "datasets" / "adult-attributes.tsv.gz"
#: (name, column of the raw file); age is bucketed, every other column taken as it is.
ATTRIBUTES = (
    ("age", 0),
    ("workclass", 1),
    ("education", 3),
    ("marital", 5),
    ("occupation", 6),
    ("relationship", 7),
    ("race", 8),
    ("sex", 9),
    ("native-country", 13),
    ("income", 14),
)
AGE_EDGES = (17, 20, 30, 40, 50, 60, 70)
AGE_LABELS = ("17-19", "20-29", "30-39", "40-49", "50-59", "60-69", "70+")


def age_bucket(age: int) -> str:
    return AGE_LABELS[sum(age >= e for e in AGE_EDGES) - 1]


def records(shared: Path) -> list[tuple[str, ...]]:
    out = []
    for fields in raw_records(shared):  # both files, checked as the adult histogram's build checks them
        fields[14] = fields[14].rstrip(".")  # adult.test writes "<=50K." and ">50K."
        out.append(tuple(age_bucket(int(fields[c])) if c == 0 else fields[c] for _, c in ATTRIBUTES))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared", help="the shared folder")
    args = parser.parse_args(argv)
    rows = records(args.shared)
    values = [AGE_LABELS] + [tuple(sorted({r[j] for r in rows})) for j in range(1, len(ATTRIBUTES))]
    index = [{v: i for i, v in enumerate(vals)} for vals in values]
    joint = collections.Counter(tuple(index[j][r[j]] for j in range(len(ATTRIBUTES))) for r in rows)
    text = io.StringIO(newline="\n")
    for (name, _), vals in zip(ATTRIBUTES, values):
        text.write("#\t" + name + "\t" + "\t".join(vals) + "\n")
    for key in sorted(joint):
        text.write("\t".join(map(str, key)) + "\t" + str(joint[key]) + "\n")
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(text.getvalue().encode("ascii"))
    TARGET.write_bytes(buf.getvalue())
    sizes = "x".join(str(len(v)) for v in values)
    print(f"wrote {TARGET.relative_to(ROOT)}: {len(rows):,} records, {len(joint):,} distinct tuples over {sizes}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
