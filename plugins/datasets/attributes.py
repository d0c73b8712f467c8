"""Populations of users with several attributes (``record = "tuple"``; docs/multidimensional.md).

- ``adult-attributes``: the 48,842 records of UCI Adult as tuples of ten categorical attributes
  (``datasets/adult-attributes.tsv.gz``, provenance in ``datasets/adult-attributes.md``), all of
  them or those named in ``attributes`` — the kind of data of the multidimensional experiments of
  Arcolezi, Couchot, Al Bouna & Xiao (CIKM 2021, §5: Adult among their real datasets).
- ``correlated-attributes``: a synthetic population of ``n`` users with ``a`` attributes over
  ``[d]`` each, Zipf(``s``) marginals and a chosen dependence: a Gaussian copula with
  equicorrelation ``rho`` (``z ~ N(0, (1 - rho) I + rho 11^T)``, ``x_j = F^{-1}(Phi(z_j))`` with
  ``F`` the Zipf CDF), drawn with its own ``seed`` (a fixed workload: the randomness of a run lives
  in the reports), vectorized.
- ``adult-attributes-rounds``: a **stand-in** for tuples over rounds (Adult has no periods):
  ``adult-attributes``'s users as round 0, then ``rounds - 1`` rounds in which each user,
  independently with probability ``r`` per round, takes the whole row of a uniformly drawn Adult
  record (the ``redraw`` change model of ``ldpbench.types.rounds`` applied to tuples: the joint
  law is kept, a user's attributes change together), each round with its own stream
  (:func:`ldpbench.types.rounds.round_streams`). For the longitudinal solutions ``l-spl`` and
  ``l-smp`` (docs/multidimensional.md).
"""

from __future__ import annotations

import gzip
import math
from importlib import resources

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.params import Param
from ldpbench.types import Dataset, Population
from ldpbench.types.attributes import Attributes, tuple_population
from ldpbench.types.rounds import round_streams

from .synthetic import MAX_USERS

ADULT_FILE = "adult-attributes.tsv.gz"


def read_attributes(raw: bytes) -> Attributes:
    """The shipped format: ``#\\tname\\tlabel...`` per attribute, then ``i_1 ... i_a count`` per
    distinct tuple (tab-separated); users are expanded in file order."""
    lines = gzip.decompress(raw).decode("ascii").splitlines()
    heads = [ln.split("\t")[1:] for ln in lines if ln.startswith("#\t")]
    body = np.loadtxt(lines[len(heads) :], dtype=np.int64, delimiter="\t", ndmin=2)
    rows = np.repeat(body[:, :-1], body[:, -1], axis=0)
    return Attributes(
        tuple(h[0] for h in heads), tuple(len(h) - 1 for h in heads), rows, tuple(tuple(h[1:]) for h in heads)
    )


class AdultAttributes(Dataset):
    """UCI Adult, 48,842 users, each holding ten categorical attributes (or the chosen ones)."""

    name = "adult-attributes"
    params = (
        Param(
            "attributes",
            str,
            "",
            "comma-separated attribute names, in this order (empty: all ten: age, workclass, education, "
            "marital, occupation, relationship, race, sex, native-country, income)",
        ),
    )

    def load(self, rng: np.random.Generator) -> Population:
        return tuple_population(
            self.chosen(),
            name="adult-attributes",
            info={"source": "UCI Adult (Census Income), adult.data + adult.test; datasets/adult-attributes.md"},
        )

    def chosen(self) -> Attributes:
        """The shipped users with the chosen attributes."""
        raw = resources.files("ldpbench_data").joinpath(ADULT_FILE).read_bytes()
        attrs = read_attributes(raw)
        chosen = [s.strip() for s in self.attributes.split(",") if s.strip()]
        if chosen:
            unknown = [c for c in chosen if c not in attrs.names]
            if unknown or len(set(chosen)) != len(chosen):
                raise UsageError(
                    f"'attributes' must name distinct attributes of {', '.join(attrs.names)}; not {', '.join(unknown) or 'twice'}"
                )
            cols = [attrs.index(c) for c in chosen]
            assert attrs.labels is not None
            attrs = Attributes(
                tuple(chosen),
                tuple(attrs.sizes[j] for j in cols),
                attrs.rows[:, cols],
                tuple(attrs.labels[j] for j in cols),
            )
        return attrs


def redraw_rows(rows: np.ndarray, T: int, r: float, streams: list[np.random.Generator]) -> np.ndarray:  # noqa: N803
    """``(T, n, a)``: round 0 is ``rows``; in round t each user, with probability ``r``, takes the
    round-0 row of a uniformly drawn user (``streams[t]``; a loop over rounds, vectorized over users)."""
    n = rows.shape[0]
    out = np.empty((T,) + rows.shape, dtype=np.int64)
    out[0] = rows
    for t in range(1, T):
        out[t] = out[t - 1]
        if r <= 0:
            continue
        moves = np.flatnonzero(streams[t].random(n) < r)
        out[t, moves] = rows[streams[t].integers(0, n, size=moves.size)]
    return out


class AdultAttributesRounds(AdultAttributes):
    """Adult's users as round 0, then each redraws their whole row w.p. ``r`` per round: a stand-in."""

    name = "adult-attributes-rounds"
    params = AdultAttributes.params + (
        Param("rounds", int, 5, "number of rounds of collection", min=1, max=1000),
        Param("r", float, 0.1, "probability that a user takes a fresh Adult row in a round", min=0, max=1),
    )

    def load(self, rng: np.random.Generator) -> Population:
        attrs = self.chosen()
        seq = redraw_rows(attrs.rows, self.rounds, self.r, round_streams(rng, self.rounds))
        attrs = Attributes(attrs.names, attrs.sizes, attrs.rows, attrs.labels, seq)
        return tuple_population(
            attrs,
            name=f"adult-attributes-rounds(T={self.rounds},r={self.r:g}; stand-in: modelled changes)",
            info={
                "source": "UCI Adult as round 0 (datasets/adult-attributes.md); later rounds by the redraw "
                "change model over whole rows: a stand-in, not per-period data",
                "rounds": self.rounds,
                "stand_in": True,
            },
        )


def zipf_cdf(d: int, s: float) -> np.ndarray:
    """The CDF of Zipf(s) over ``[d]`` (``P(v) ~ (v + 1)^-s``)."""
    w = np.arange(1, d + 1, dtype=float) ** (-s)
    return np.cumsum(w / w.sum())


def correlated_rows(n: int, a: int, d: int, s: float, rho: float, rng: np.random.Generator) -> np.ndarray:
    """``(n, a)`` items: a Gaussian copula with equicorrelation ``rho`` over Zipf(s) marginals
    (``z_j = sqrt(rho) g + sqrt(1 - rho) e_j``, ``g`` shared by a user's attributes)."""
    from scipy.special import ndtr

    shared = rng.standard_normal((n, 1))
    z = math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * rng.standard_normal((n, a))
    cdf = zipf_cdf(d, s)
    rows = np.searchsorted(cdf, ndtr(z), side="right")
    return np.minimum(rows, d - 1).astype(np.int64)


class CorrelatedAttributes(Dataset):
    """``n`` users with ``a`` attributes over ``[d]``, Zipf(s) marginals, copula correlation ``rho``."""

    name = "correlated-attributes"
    params = (
        Param("n", int, 100_000, "number of users", min=1, max=MAX_USERS),
        Param("a", int, 3, "number of attributes", min=1, max=64),
        Param("d", int, 16, "each attribute's domain size", min=2, max=1_000_000),
        Param("s", float, 1.0, "Zipf exponent of every marginal (0 gives uniform)", min=0, max=100),
        Param("rho", float, 0.5, "correlation of the Gaussian copula between any two attributes", min=0, max=1),
        Param("seed", int, 0, "the population's own seed (a fixed workload)", min=0),
    )

    def load(self, rng: np.random.Generator) -> Population:
        rows = correlated_rows(self.n, self.a, self.d, self.s, self.rho, np.random.default_rng(self.seed))
        attrs = Attributes(tuple(f"a{j}" for j in range(self.a)), (self.d,) * self.a, rows)
        return tuple_population(
            attrs,
            name="correlated-attributes",
            info={"synthetic": True, "copula_rho": self.rho, "zipf_s": self.s, "seed": self.seed},
        )


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(AdultAttributes)
    registry.register(CorrelatedAttributes)
    registry.register(AdultAttributesRounds)
