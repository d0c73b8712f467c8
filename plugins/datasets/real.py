"""Real datasets: the shipped FIMI histograms, any FIMI file, and the full Kosarak from a path.

- ``retail``: FIMI Retail, complete (n = 908,577 users, d = 16,470 items), shipped.
- ``kosarak-head``: the first 36,682 Kosarak transactions only, a **partial sample** (n = 294,009,
  d = 17,034), shipped for smoke tests; it does not stand in for Kosarak.
- ``fimi``: any FIMI-format transaction file you point at (``path``; ``.gz``/``.xz``/``.bz2`` ok).
- ``kosarak``: the full Kosarak file (990,002 transactions, n = 8,019,015, d = 41,270) from
  ``path`` or from the cache directory; verified (git blob SHA-1 and the published counts) before
  use, with a clear message saying where to get it when it is missing.

Every transaction's items count as separate users (the one-item-per-user view of [JG19] §IV-A
and [W17]). Provenance notes ship next to the histograms (``ldpbench_data/<name>.md``).
"""

from __future__ import annotations

import gzip
import io
import os
from importlib import resources
from pathlib import Path

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.params import Param
from ldpbench.types import Dataset, Population

from ._fimi import git_blob_sha1, histogram, parse_fimi, read_bytes

#: The canonical kosarak.dat (FIMI): its ``git hash-object`` id, found identical in two independent
#: public repositories, and its published statistics.
KOSARAK_BLOB_SHA1 = "1633c5aa6070d384beab4b3a36e9fb8f173fab84"
KOSARAK_STATS = {"transactions": 990_002, "n": 8_019_015, "d": 41_270}
KOSARAK_FILENAMES = ("kosarak.dat", "kosarak.dat.gz", "kosarak.dat.xz", "kosarak.dat.bz2")
KOSARAK_HELP = (
    "The full Kosarak click-stream file (kosarak.dat, about 32 MB; 990,002 transactions) is not "
    "shipped with ldpbench. Download it from the FIMI repository (http://fimi.uantwerpen.be/data/"
    "kosarak.dat, also mirrored in several public research repositories), then either pass "
    "`kosarak: {{path: /path/to/kosarak.dat}}` or put the file (optionally .gz/.xz) in the cache "
    "directory {cache}. ldpbench checks its git blob SHA-1 ({sha}) and its counts before use. "
    "For a small smoke test use the shipped partial sample `kosarak-head`; for a Kosarak-scale "
    "synthetic stand-in use `zipf: {{d: 41270, n: 8019015}}`."
)


def cache_dir() -> Path:
    """Where ldpbench looks for data files: ``$LDPBENCH_CACHE``, else ``$XDG_CACHE_HOME/ldpbench``,
    else ``~/.cache/ldpbench``."""
    if os.environ.get("LDPBENCH_CACHE"):
        return Path(os.environ["LDPBENCH_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base).expanduser() / "ldpbench"


def shipped_histogram(name: str) -> tuple[np.ndarray, list[str]]:
    """Counts and item labels of a shipped ``ldpbench_data/<name>.csv.gz``."""
    try:
        raw = resources.files("ldpbench_data").joinpath(f"{name}.csv.gz").read_bytes()
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        raise UsageError(f"shipped dataset '{name}' is missing from this installation ({exc})") from None
    text = gzip.GzipFile(fileobj=io.BytesIO(raw)).read().decode("ascii")
    rows = text.splitlines()[1:]  # header: item,count
    labels = [r.split(",", 1)[0] for r in rows]
    counts = np.fromiter((int(r.rsplit(",", 1)[1]) for r in rows), dtype=np.int64, count=len(rows))
    return counts, labels


def provenance(name: str) -> str:
    """The shipped provenance note of a dataset (Markdown)."""
    return resources.files("ldpbench_data").joinpath(f"{name}.md").read_text(encoding="utf-8")


class _Shipped(Dataset):
    """A histogram shipped in ``ldpbench_data`` as ``<name>.csv.gz`` with a ``<name>.md`` note."""

    #: the population's label (a partial sample says so in it)
    label: str = ""
    source: str = ""
    partial: bool = False

    def load(self, rng: np.random.Generator) -> Population:
        counts, labels = shipped_histogram(self.name)
        return Population(
            counts,
            name=self.label or self.name,
            labels=labels,
            info={
                "source": f"{self.source}; shipped ldpbench_data/{self.name}.csv.gz",
                "provenance": f"ldpbench_data/{self.name}.md",
                "partial": self.partial,
            },
        )


class Retail(_Shipped):
    """FIMI Retail market-basket data, complete: n = 908,577 users, d = 16,470 items (shipped)."""

    name = "retail"
    source = "FIMI retail (Brijs et al., KDD 1999), complete"


class KosarakHead(_Shipped):
    """PARTIAL SAMPLE of Kosarak (first 36,682 of 990,002 transactions): n = 294,009, d = 17,034."""

    name = "kosarak-head"
    label = "kosarak-head (partial sample: first 36,682 of 990,002 transactions)"
    source = "FIMI kosarak, PARTIAL SAMPLE (first 36,682 transactions, ~3.7%)"
    partial = True


class Fimi(Dataset):
    """Any FIMI-format transaction file (one transaction per line, item ids separated by spaces)."""

    name = "fimi"
    params = (
        Param("path", str, help="FIMI-format file (.gz, .xz, .bz2 are decompressed)", path=True),
        Param(
            "domain",
            str,
            "observed",
            "items: the ids that occur (observed) or every id 0..max (id-range)",
            choices=("observed", "id-range"),
        ),
    )

    def load(self, rng: np.random.Generator) -> Population:
        path = Path(self.path).expanduser()
        if not path.is_file():
            raise UsageError(f"FIMI file not found: {path}")
        stats = parse_fimi(read_bytes(path), str(path))
        counts, labels = histogram(stats.items, self.domain)
        return Population(
            counts,
            name=path.name,
            labels=labels,
            info={"source": str(path), "transactions": stats.transactions},
        )


class Kosarak(Dataset):
    """Full FIMI Kosarak (n = 8,019,015, d = 41,270) from a file you provide; verified before use."""

    name = "kosarak"
    params = (
        Param(
            "path",
            str,
            None,
            "kosarak.dat (or .gz/.xz); default: look in the cache directory",
            path=True,
            nullable=True,
        ),
        Param("verify", bool, True, "check the file's git blob SHA-1 and counts against the canonical Kosarak"),
    )

    def locate(self) -> Path:
        if self.path:
            path = Path(self.path).expanduser()
            if not path.is_file():
                raise UsageError(f"kosarak: file not found: {path}\n" + self.help_text())
            return path
        for name in KOSARAK_FILENAMES:
            candidate = cache_dir() / name
            if candidate.is_file():
                return candidate
        raise UsageError(
            f"kosarak: needs the full kosarak.dat (not shipped): give 'path' or put it in {cache_dir()}\n"
            + self.help_text()
        )

    @staticmethod
    def help_text() -> str:
        return KOSARAK_HELP.format(cache=cache_dir(), sha=KOSARAK_BLOB_SHA1)

    def load(self, rng: np.random.Generator) -> Population:
        path = self.locate()
        data = read_bytes(path)
        if self.verify:
            digest = git_blob_sha1(data)
            if digest != KOSARAK_BLOB_SHA1:
                raise UsageError(
                    f"kosarak: {path} is not the canonical kosarak.dat ({len(data):,} bytes, git blob "
                    f"SHA-1 {digest}; expected {KOSARAK_BLOB_SHA1}). A truncated or modified copy "
                    "gives different numbers; set `verify: false` to use it anyway.\n" + self.help_text()
                )
        stats = parse_fimi(data, str(path))
        counts, labels = histogram(stats.items, "observed")
        found = {"transactions": stats.transactions, "n": int(counts.sum()), "d": int(counts.size)}
        if self.verify and found != KOSARAK_STATS:
            raise UsageError(f"kosarak: {path} has {found}, expected {KOSARAK_STATS}")
        return Population(
            counts,
            name="kosarak" if self.verify else f"kosarak (unverified copy: {path.name})",
            labels=labels,
            info={"source": f"FIMI kosarak, {path}", "verified": bool(self.verify), **found},
        )


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(Retail)
    registry.register(KosarakHead)
    registry.register(Fimi)
    registry.register(Kosarak)
