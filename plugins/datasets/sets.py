"""Set-valued populations (record ``set``, docs/data-model.md): every user holds a set of items.

- ``retail-sets``: FIMI Retail, each of its 88,162 transactions one user holding its items
  (complete; shipped as ``ldpbench_data/retail-sets.sets.gz``, ``datasets/retail-sets.md``);
- ``kosarak-head-sets``: the first 36,682 Kosarak transactions as sets (a **partial sample**;
  ``datasets/kosarak-head-sets.md``);
- both take ``users``: that many users drawn from the file's with replacement (a bootstrap
  stand-in at another scale, e.g. the Kosarak head at full Kosarak's 990,002 users);
- ``zipf-sets``: synthetic. User i draws ``m_i = 1 + Poisson(mean_size - 1)`` items independently
  from Zipf(``s``) over ``[d]`` (item r, 0-based, with probability proportional to
  ``(r + 1)^(-s)``) and holds the distinct ones; items are drawn with the dataset's stream, so a
  spec's seed fixes the population (vectorized: O(sum m_i) draws and one sort).

The shipped files are written by ``scripts/build_set_datasets.py`` (format in its docstring).
"""

from __future__ import annotations

import gzip
import io
from importlib import resources

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.params import Param
from ldpbench.types import Dataset, Population

from .synthetic import MAX_USERS

MAGIC = b"LDPBSETS1\n"


def decode_sets(raw: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(offsets, members, ids)`` of a ``.sets.gz`` payload (decompressed bytes)."""
    if not raw.startswith(MAGIC):
        raise UsageError("not an ldpbench set file (bad magic)")
    at = len(MAGIC)
    n, m, d = (int(x) for x in np.frombuffer(raw, dtype="<u4", count=3, offset=at))
    at += 12
    ids = np.frombuffer(raw, dtype="<u4", count=d, offset=at).astype(np.int64)
    at += 4 * d
    sizes = np.frombuffer(raw, dtype="<u2", count=n, offset=at).astype(np.int64)
    at += 2 * n
    planes = np.frombuffer(raw, dtype=np.uint8, count=2 * m, offset=at).reshape(2, m).astype(np.int64)
    if at + 2 * m != len(raw) or int(sizes.sum()) != m:
        raise UsageError("ldpbench set file: sizes do not match the payload")
    deltas = planes[0] | (planes[1] << 8)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    # Positions: a running sum of the deltas restarted at every user's first member.
    total = np.cumsum(deltas)
    before = np.concatenate([[0], total])[offsets[:-1]]
    members = total - np.repeat(before, sizes)
    return offsets, members, ids


def shipped_sets(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The CSR pair and item ids of a shipped ``ldpbench_data/<name>.sets.gz``."""
    try:
        raw = resources.files("ldpbench_data").joinpath(f"{name}.sets.gz").read_bytes()
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise UsageError(f"shipped dataset '{name}' is missing from this installation ({exc})") from None
    return decode_sets(gzip.GzipFile(fileobj=io.BytesIO(raw)).read())


def resample_users(
    offsets: np.ndarray, members: np.ndarray, users: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``users`` users drawn uniformly with replacement, each with their set (a bootstrap stand-in
    at another scale: the same law of sets, item shares within noise of the original's)."""
    chosen = rng.integers(0, offsets.size - 1, size=users)
    sizes = np.diff(offsets)[chosen]
    out = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    starts = np.repeat(offsets[chosen] - out[:-1], sizes)
    return out, members[starts + np.arange(out[-1])]


class _ShippedSets(Dataset):
    """A set-valued FIMI dataset shipped as ``<name>.sets.gz`` with a ``<name>.md`` note."""

    label: str = ""
    source: str = ""
    partial: bool = False
    params = (
        Param(
            "users",
            int,
            0,
            "0: the file's users; otherwise that many drawn from them with replacement (a stand-in at another scale)",
            min=0,
            max=MAX_USERS,
        ),
    )

    def load(self, rng: np.random.Generator) -> Population:
        offsets, members, ids = shipped_sets(self.name)
        label = self.label or self.name
        if self.users:
            offsets, members = resample_users(offsets, members, self.users, rng)
            label = f"{self.name} resampled to {self.users:,} users"
        return Population.from_sets(
            offsets,
            members,
            ids.size,
            name=label,
            labels=[str(int(i)) for i in ids],
            info={
                "source": f"{self.source}; shipped ldpbench_data/{self.name}.sets.gz",
                "provenance": f"ldpbench_data/{self.name}.md",
                "partial": self.partial,
                **({"resampled_users": self.users} if self.users else {}),
            },
        )


class RetailSets(_ShippedSets):
    """FIMI Retail, each transaction a user holding a set: n = 88,162 users, d = 16,470 items."""

    name = "retail-sets"
    source = "FIMI retail (Brijs et al., KDD 1999), complete, one set per transaction"


class KosarakHeadSets(_ShippedSets):
    """The first 36,682 Kosarak transactions as sets (a partial sample): d = 17,034 items."""

    name = "kosarak-head-sets"
    label = "kosarak-head-sets (partial sample: first 36,682 of 990,002 transactions)"
    source = "FIMI kosarak, PARTIAL SAMPLE (first 36,682 transactions, ~3.7%), one set per transaction"
    partial = True


def zipf_sets(n: int, d: int, s: float, mean_size: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """The CSR pair of ``zipf-sets`` (see the module docstring)."""
    draws = 1 + rng.poisson(mean_size - 1, size=n)
    pmf = np.arange(1, d + 1, dtype=float) ** (-s)
    pmf /= pmf.sum()
    items = rng.choice(d, size=int(draws.sum()), p=pmf)
    rows = np.repeat(np.arange(n, dtype=np.int64), draws)
    keys = np.unique(rows * d + items)  # sorted: by user, then item; repeats dropped
    users, members = keys // d, keys % d
    offsets = np.concatenate([[0], np.cumsum(np.bincount(users, minlength=n))]).astype(np.int64)
    return offsets, members


class ZipfSets(Dataset):
    """Synthetic set-valued users: Zipf items, 1 + Poisson set sizes (see the module docstring)."""

    name = "zipf-sets"
    params = (
        Param("n", int, 20_000, "number of users", min=1, max=MAX_USERS),
        Param("d", int, 1_000, "domain size", min=2, max=10**7),
        Param("s", float, 1.1, "Zipf exponent of the items", min=0, max=100),
        Param("mean_size", float, 4.0, "mean number of draws per user (1 + Poisson(mean_size - 1))", min=1, max=1000),
    )

    def load(self, rng: np.random.Generator) -> Population:
        offsets, members = zipf_sets(self.n, self.d, self.s, self.mean_size, rng)
        return Population.from_sets(
            offsets,
            members,
            self.d,
            name=f"zipf-sets(n={self.n}, d={self.d}, s={self.s:g}, mean_size={self.mean_size:g})",
            info={"synthetic": True},
        )


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(RetailSets)
    registry.register(KosarakHeadSets)
    registry.register(ZipfSets)
