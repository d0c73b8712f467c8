"""A user's own item-count histogram from a CSV file.

Accepted layouts (a header line is optional and detected):

- two columns ``item,count`` — an item label and its count (one item per line);
- one column ``count`` — the counts of items 0, 1, 2, ...

Blank lines and lines starting with ``#`` are ignored. The path in a spec resolves relative to the
spec's folder.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.params import Param
from ldpbench.types import Dataset, Population


def read_histogram_csv(path: Path) -> tuple[np.ndarray, list[str] | None]:
    """Counts and optional labels from a histogram CSV (see the module docstring)."""
    if not path.is_file():
        raise UsageError(f"histogram file not found: {path}")
    labels: list[str] = []
    counts: list[int] = []
    with path.open(newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.reader(fh) if r and not r[0].lstrip().startswith("#")]
    for lineno, row in enumerate(rows, start=1):
        row = [c.strip() for c in row]
        try:
            count = int(row[-1])
        except ValueError:
            if lineno == 1:
                continue  # a header line
            raise UsageError(f"{path}:{lineno}: count {row[-1]!r} is not an integer") from None
        if count < 0:
            raise UsageError(f"{path}:{lineno}: negative count {count}")
        if len(row) > 2:
            raise UsageError(f"{path}:{lineno}: expected 'item,count' or 'count', got {len(row)} columns")
        counts.append(count)
        if len(row) == 2:
            labels.append(row[0])
    if not counts:
        raise UsageError(f"{path}: no counts found")
    if labels and len(labels) != len(counts):
        raise UsageError(f"{path}: some lines have an item label and some do not")
    return np.asarray(counts, dtype=np.int64), (labels or None)


class Histogram(Dataset):
    """Item counts from a CSV file you provide (``item,count`` or one count per line)."""

    name = "histogram"
    params = (Param("path", str, help="CSV file of item counts", path=True),)

    def load(self, rng: np.random.Generator) -> Population:
        path = Path(self.path)
        counts, labels = read_histogram_csv(path)
        return Population(counts, name=path.stem, labels=labels, info={"source": str(path)})


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(Histogram)
