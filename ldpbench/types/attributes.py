"""Multidimensional records: users holding one item per attribute (``record = "tuple"``).

A user's record is a tuple ``(x_1, ..., x_a)``, attribute ``j`` over its own enumerable domain
``[d_j]`` (docs/multidimensional.md). :class:`Attributes` holds the users as an ``n x a`` integer
array (one row per user); :meth:`Attributes.from_joint` builds it from joint counts where the
product of the domains is small. The truth of attribute ``j`` is its marginal histogram.

A tuple population is a :class:`~ldpbench.types.Population` with ``record = "tuple"`` and this
object as its ``attributes``; its ``counts`` are the attributes' marginal histograms laid end to
end (``d = sum d_j`` entries, each block summing to ``n``), and ``n`` is the number of users.
A multidimensional protocol returns one ``frequencies`` estimate per attribute, labelled by the
attribute's name; the engine scores output ``mechanism:name`` against that attribute's marginal
(:func:`output_truth`), so every frequency metric and post-processor applies per attribute.

Tuples over rounds (the longitudinal multidimensional solutions, docs/multidimensional.md): an
:class:`Attributes` may carry ``rounds``, every user's row in each of ``T`` rounds (``(T, n, a)``,
round 0 being ``rows``). The population stays a tuple population (its ``counts`` are round 0's
marginals); a solution over rounds labels its outputs ``name:round-t`` (1-based) and
``name:rounds-mean``, scored against attribute ``name``'s marginal in round t, or over every round's
users together (:func:`output_truth`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # data.py reaches this module only through a Population's field
    from ldpbench.types.data import Population

#: The most cells :meth:`Attributes.from_joint` expands (the product of the domains).
MAX_JOINT = 10**7


@dataclass(frozen=True, eq=False)
class Attributes:
    """The users of a tuple population: ``rows[i, j]`` is user i's item of attribute j.

    :param names: one distinct name per attribute (the label of its output, e.g. ``age``).
    :param sizes: ``d_j``, each attribute's domain size (at least 1).
    :param rows: ``(n, a)`` integers, ``0 <= rows[:, j] < sizes[j]``; held read-only.
    :param labels: optional item labels per attribute (``labels[j][v]``).
    :param rounds: optional ``(T, n, a)`` integers, every user's row in each round (``rounds[0]``
        equal to ``rows``); held read-only. ``None``: one round, ``rows``.
    """

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    rows: np.ndarray
    labels: tuple[tuple[str, ...], ...] | None = None
    rounds: np.ndarray | None = None

    def __post_init__(self) -> None:
        names, sizes = tuple(str(s) for s in self.names), tuple(int(s) for s in self.sizes)
        if not names or len(names) != len(sizes):
            raise ValueError("Attributes need one name per domain size, and at least one attribute")
        if len(set(names)) != len(names) or any(not s or ":" in s for s in names):
            raise ValueError("attribute names must be distinct, non-empty and without ':'")
        if min(sizes) < 1:
            raise ValueError("every attribute's domain has at least one item")
        rows = np.asarray(self.rows)
        if rows.ndim != 2 or rows.shape[1] != len(sizes) or not np.issubdtype(rows.dtype, np.integer):
            raise ValueError(f"Attributes.rows must be an integer (n, {len(sizes)}) array")
        rows = rows.astype(np.int64, copy=False)
        if rows.size and (rows.min(axis=0).min() < 0 or np.any(rows.max(axis=0) >= np.asarray(sizes))):
            raise ValueError("Attributes.rows holds an item outside its attribute's domain")
        if self.labels is not None and [len(lab) for lab in self.labels] != list(sizes):
            raise ValueError("Attributes.labels needs one label per item of every attribute")
        if rows.flags.writeable:
            rows = rows.view()
            rows.flags.writeable = False
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "rows", rows)
        if self.rounds is not None:
            seq = np.asarray(self.rounds)
            if seq.ndim != 3 or seq.shape[1:] != rows.shape or not np.issubdtype(seq.dtype, np.integer):
                raise ValueError(f"Attributes.rounds must be an integer (T, {rows.shape[0]}, {len(sizes)}) array")
            seq = seq.astype(np.int64, copy=False)
            if not np.array_equal(seq[0], rows):
                raise ValueError("Attributes.rounds[0] must be the rows (round 0)")
            if seq.size and (seq.min() < 0 or np.any(seq.max(axis=(0, 1)) >= np.asarray(sizes))):
                raise ValueError("Attributes.rounds holds an item outside its attribute's domain")
            if seq.flags.writeable:
                seq = seq.view()
                seq.flags.writeable = False
            object.__setattr__(self, "rounds", seq)

    @classmethod
    def from_joint(
        cls, joint: np.ndarray, names: Sequence[str], labels: Sequence[Sequence[str]] | None = None
    ) -> Attributes:
        """Users from joint counts: ``joint[x_1, ..., x_a]`` users hold that tuple (rows in
        row-major order of the tuples); for a product of domains up to :data:`MAX_JOINT`."""
        joint = np.asarray(joint)
        if joint.size > MAX_JOINT:
            raise ValueError(f"joint counts over {joint.size:,} cells: pass the users' rows instead")
        if joint.size and joint.min() < 0:
            raise ValueError("joint counts must be non-negative")
        cells = np.repeat(np.arange(joint.size), joint.reshape(-1).astype(np.int64))
        rows = np.stack(np.unravel_index(cells, joint.shape), axis=1) if joint.ndim else cells[:, None]
        return cls(tuple(names), tuple(joint.shape), rows, None if labels is None else tuple(map(tuple, labels)))

    @property
    def n(self) -> int:
        """Number of users."""
        return int(self.rows.shape[0])

    @property
    def a(self) -> int:
        """Number of attributes."""
        return len(self.sizes)

    @property
    def T(self) -> int:  # noqa: N802 - the papers' name
        """Number of rounds (1 without ``rounds``)."""
        return 1 if self.rounds is None else int(self.rounds.shape[0])

    def round_items(self, j: int) -> np.ndarray:
        """``(T, n)``: attribute ``j``'s item of every user in every round (a sequence, as
        :class:`ldpbench.types.rounds.Rounds` holds)."""
        return self.rows[None, :, j] if self.rounds is None else self.rounds[:, :, j]

    def index(self, name: str) -> int:
        """The position of attribute ``name``."""
        return self.names.index(name)

    def marginal_counts(self, j: int) -> np.ndarray:
        """Attribute ``j``'s histogram (length ``d_j``, summing to ``n``)."""
        return np.bincount(self.rows[:, j], minlength=self.sizes[j]).astype(np.int64)

    def counts(self) -> np.ndarray:
        """Every attribute's histogram laid end to end (what a tuple population's ``counts`` hold)."""
        return np.concatenate([self.marginal_counts(j) for j in range(self.a)])

    def check_counts(self, counts: np.ndarray) -> None:
        """Refuse ``counts`` that are not :meth:`counts` (a Population's own check)."""
        if not np.array_equal(np.asarray(counts), self.counts()):
            raise ValueError("a tuple population's counts must be its attributes' marginal histograms end to end")

    def take(self, users: np.ndarray) -> Attributes:
        """The given users (indices), in that order."""
        users = np.asarray(users, dtype=np.int64)
        rounds = None if self.rounds is None else self.rounds[:, users]
        return Attributes(self.names, self.sizes, self.rows[users], self.labels, rounds)

    def sample_population(self, population: Population, m: int, rng: np.random.Generator) -> Population:
        """``m`` users of ``population`` drawn without replacement (kept in their order)."""
        chosen = np.sort(rng.choice(self.n, size=m, replace=False))
        sub = self.take(chosen)
        return population.replace(counts=sub.counts(), attributes=sub)


def tuple_population(attributes: Attributes, name: str = "", info: dict[str, Any] | None = None) -> Population:
    """A population with ``record = "tuple"`` over ``attributes`` (counts derived)."""
    from ldpbench.types.data import Population

    labels = None
    if attributes.labels is not None:
        labels = [f"{n}={v}" for n, labs in zip(attributes.names, attributes.labels) for v in labs]
    return Population(
        attributes.counts(), name=name, labels=labels, info=dict(info or {}), record="tuple", attributes=attributes
    )


def parse_output(population: Population, suffix: str) -> tuple[int, int | None] | None:
    """``(j, t)`` of an output labelled ``mechanism:suffix``: attribute ``j``, round ``t`` (0-based)
    of a ``name:round-t`` suffix, ``-1`` for ``name:rounds-mean``, ``None`` for a plain ``name``;
    ``None`` altogether for a label that names no attribute (or no round of it)."""
    attrs = population.attributes
    if attrs is None:
        return None
    name, _, part = suffix.partition(":")
    if name not in attrs.names:
        return None
    if not part:
        return attrs.index(name), None
    from ldpbench.types.rounds import MEAN_LABEL, round_of

    if part == MEAN_LABEL:
        return attrs.index(name), -1
    t = round_of(":" + part)
    if t is None or not 0 <= t < attrs.T:
        return None
    return attrs.index(name), t


def output_attribute(population: Population, suffix: str) -> int | None:
    """The attribute an output labelled ``mechanism:suffix`` estimates, or ``None`` (a population
    that is not a tuple, or a label that names no attribute)."""
    found = parse_output(population, suffix)
    return None if found is None else found[0]


def output_truth(population: Population, suffix: str) -> Population:
    """What output ``mechanism:suffix`` is scored against: attribute ``suffix``'s marginal, as a
    one-item population of ``n`` users over ``[d_j]`` (``name:round-t``: in round t;
    ``name:rounds-mean``: every round's users together, ``n T`` of them, whose frequencies are the
    mean of the rounds'); ``population`` itself otherwise."""
    found = parse_output(population, suffix)
    if found is None:
        return population
    from ldpbench.types.data import Population

    j, t = found
    attrs = population.attributes
    assert attrs is not None
    if t is None:
        counts = attrs.marginal_counts(j)
    elif t == -1:
        counts = np.bincount(attrs.round_items(j).ravel(), minlength=attrs.sizes[j]).astype(np.int64)
    else:
        counts = np.bincount(attrs.round_items(j)[t], minlength=attrs.sizes[j]).astype(np.int64)
    labels = None if attrs.labels is None else list(attrs.labels[j])
    info = {**dict(population.info), "attribute": attrs.names[j]}
    return Population(counts, name=f"{population.name}:{suffix}", labels=labels, info=info)


def output_d(population: Population, suffix: str) -> int:
    """The domain size an output's estimate covers: ``d_j`` of its attribute, else ``population.d``."""
    j = output_attribute(population, suffix)
    return population.d if j is None else population.attributes.sizes[j]  # type: ignore[union-attr]


__all__ = [
    "MAX_JOINT",
    "Attributes",
    "output_attribute",
    "output_d",
    "output_truth",
    "parse_output",
    "tuple_population",
]
