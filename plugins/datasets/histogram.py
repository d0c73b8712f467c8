"""A user's own item-count histogram from a CSV file.

Accepted layouts (a header line is optional and detected):

- two columns ``item,count`` — an item label and its count (one item per line);
- one column ``count`` — the counts of items 0, 1, 2, ...

Blank lines and lines starting with ``#`` are ignored. The path in a spec resolves relative to the
spec's folder.

A message about a malformed line names the line, never its content: a spec may point ``path`` at
any file the user can read (``/etc/shadow``), and the messages end up in terminals, logs and
results folders that others see.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.params import Param
from ldpbench.types import Dataset, Population
from ldpbench.util.safeio import read_text_bounded

#: The largest histogram file read (a line per item: 10**8 items, the synthetic domain limit, is
#: about a gigabyte of CSV).
MAX_HISTOGRAM_BYTES = 1 << 30
#: The largest count of one item (the most users any dataset may hold; counts are int64).
MAX_COUNT = 10**10


def read_histogram_csv(path: Path) -> tuple[np.ndarray, list[str] | None]:
    """Counts and optional labels from a histogram CSV (see the module docstring)."""
    # Bounded, and never blocking on a FIFO or reading a device for ever.
    text = read_text_bounded(path, limit=MAX_HISTOGRAM_BYTES, what="histogram file")
    labels: list[str] = []
    counts: list[int] = []
    reader = csv.reader(io.StringIO(text, newline=""))
    first = True
    try:
        for row in reader:
            if not row or row[0].lstrip().startswith("#"):
                continue
            lineno = reader.line_num
            row = [c.strip() for c in row]
            try:
                count = int(row[-1])
            except ValueError:
                if first:
                    first = False
                    continue  # a header line
                raise UsageError(f"{path}: line {lineno}: not a count (expected a whole number)") from None
            first = False
            if count < 0:
                raise UsageError(f"{path}: line {lineno}: a negative count")
            if count > MAX_COUNT:
                raise UsageError(f"{path}: line {lineno}: a count above {MAX_COUNT:,}")
            if len(row) > 2:
                raise UsageError(f"{path}: line {lineno}: expected 'item,count' or 'count', got {len(row)} columns")
            counts.append(count)
            if len(row) == 2:
                labels.append(row[0])
    except csv.Error:
        raise UsageError(f"{path}: line {reader.line_num}: not CSV") from None
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
