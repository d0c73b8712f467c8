"""The example plugin of each kind that ``ldpbench new-plugin`` writes: small, correct, and
passing the conformance kit as generated (``tests/system/test_new_plugin.py`` checks that).

Each :class:`KindExample` is a :class:`string.Template` of the package's ``__init__.py``
(``${name}`` the plugin name, ``${cls}`` its class name) and how the generated CI spec uses the
plugin; each kind's declaration (:data:`ldpbench.types.kinds.KINDS`) names its example here.
"""

from __future__ import annotations

from dataclasses import dataclass
from string import Template


@dataclass(frozen=True)
class KindExample:
    """What the scaffold writes for one kind."""

    module: Template  #: the package's ``__init__.py``
    spec_lines: Template  #: the CI spec's lines that use the plugin
    audit: bool = False  #: also run the privacy audit (oracles)


ORACLE_MODULE = Template('''"""${name}: randomized response over the d items, as an ldpbench oracle.

Generalized randomized response (k-RR; T. Wang, J. Blocki, N. Li, S. Jha, "Locally Differentially
Private Protocols for Frequency Estimation", USENIX Security 2017, section 4.1): a user reports her
item with probability p = e^eps / (e^eps + d - 1) and each other item with q = 1 / (e^eps + d - 1).
The support of a report is the reported item, so p* = p and q* = q. Replace the body with your
protocol; keep the kit and the audit passing (tests/).
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Oracle


class ${cls}(Oracle):
    """k-RR: report the own item w.p. e^eps/(e^eps+d-1), else one of the d-1 others uniformly."""

    name = "${name}"

    def __init__(self, d, epsilon, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        # Written with e^-eps so that epsilon = inf gives p = 1, q = 0 without overflow.
        t = math.exp(-epsilon)
        self._p = 1.0 / (1.0 + (d - 1) * t)
        self._q = t / (1.0 + (d - 1) * t)

    @property
    def p_star(self):
        return self._p

    @property
    def q_star(self):
        return self._q

    # -- client side: one reported item per user, vectorized ----------------------------------
    def perturb(self, values, rng):
        values = np.asarray(values, dtype=np.int64)
        keep = rng.random(values.size) < self._p
        # Another item, uniform among the d - 1 others: shift by 1..d-1 modulo d.
        other = (values + rng.integers(1, max(self.d, 2), size=values.size)) % self.d
        return np.where(keep | (self.d == 1), values, other)

    # -- aggregator side -------------------------------------------------------------------------
    def support_counts(self, reports):
        return np.bincount(np.asarray(reports, dtype=np.int64), minlength=self.d).astype(np.int64)

    def sample_support_counts(self, true_counts, rng):
        """Exact in distribution: keep w.p. rho = p - q, else report a uniform item (maybe one's own)."""
        counts = np.asarray(true_counts, dtype=np.int64)
        rho = self._p - self._q
        kept = rng.binomial(counts, rho)
        return kept + rng.multinomial(int(counts.sum() - kept.sum()), np.full(self.d, 1.0 / self.d))

    # -- the exact output law, for the epsilon-LDP audit --------------------------------------------
    def output_table(self):
        P = np.full((self.d, self.d), self._q)
        np.fill_diagonal(P, self._p)
        return P, np.eye(self.d, dtype=bool)

    def output_rows(self, reports):
        return np.asarray(reports, dtype=np.int64)

    # -- per-user supports, for the empirical audit's distinguishing attacks ---------------------
    def support_matrix(self, reports):
        """(n_users, d) bools: a k-RR report supports exactly the item reported."""
        y = np.asarray(reports, dtype=np.int64)
        out = np.zeros((y.size, self.d), dtype=bool)
        out[np.arange(y.size), y] = True
        return out


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(${cls})
''')

POSTPROCESSOR_MODULE = Template('''"""${name}: shrink every estimate towards the uniform 1/d, as an ldpbench post-processor.

f'_v = w f_v + (1 - w) / d with a fixed weight w (parameter ``factor``): a deliberately simple
example of the contract. Replace the body with your method; keep the kit passing (tests/).
"""

from __future__ import annotations

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import PostProcessor


class ${cls}(PostProcessor):
    """Shrink towards 1/d: f' = factor * f + (1 - factor) / d. O(d)."""

    name = "${name}"
    params = (Param("factor", float, 0.9, "weight kept on the estimate", min=0, max=1),)

    def apply(self, estimate, rng):
        uniform = 1.0 / estimate.d
        return estimate.replace(frequencies=self.factor * estimate.frequencies + (1 - self.factor) * uniform)


@hookimpl
def ldpbench_register_postprocessors(registry):
    registry.register(${cls})
''')

METRIC_MODULE = Template('''"""${name}: the largest absolute error over the items, as an ldpbench metric.

max_v |f'_v - f_v| in the fraction scale. Replace the body with your metric; keep the kit
passing (tests/).
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Metric


class ${cls}(Metric):
    """Largest absolute error over the items (fraction scale); lower is better."""

    name = "${name}"
    greater_is_better = False

    def score(self, truth, estimate, rng):
        f = truth.frequencies if estimate.items is None else truth.frequencies[estimate.items]
        return float(np.max(np.abs(estimate.item_answers() - f))) if f.size else 0.0


@hookimpl
def ldpbench_register_metrics(registry):
    registry.register(${cls})
''')

DATASET_MODULE = Template('''"""${name}: a geometric population, as an ldpbench dataset.

Item v has frequency proportional to ratio^v; the n users are apportioned to the d items by the
largest-remainder method, so the population is a fixed workload (all randomness of a run lives in
the users' reports). Replace the body with your data (a shipped histogram, a file you read).
"""

from __future__ import annotations

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import Dataset, Population


class ${cls}(Dataset):
    """Geometric population: item v has frequency proportional to ratio^v."""

    name = "${name}"
    params = (
        Param("d", int, 64, "number of items", min=1, max=10**7, describes="d"),
        Param("n", int, 20_000, "number of users", min=1, max=10**10, describes="n"),
        Param("ratio", float, 0.9, "ratio of consecutive item frequencies", min=1e-6, max=1),
    )

    def load(self, rng):
        weights = self.ratio ** np.arange(self.d, dtype=float)
        exact = self.n * weights / weights.sum()
        counts = np.floor(exact).astype(np.int64)
        # Largest remainders first, ties by item index: a pure function of the parameters.
        order = np.lexsort((np.arange(self.d), -(exact - counts)))
        counts[order[: self.n - int(counts.sum())]] += 1
        return Population(counts, name=f"${name}(d={self.d},n={self.n},ratio={self.ratio:g})")


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(${cls})
''')

PROTOCOL_MODULE = Template('''"""${name}: heavy hitters by randomized response over the d items, as an ldpbench protocol.

Every user reports her item once with generalized randomized response (k-RR; T. Wang, J. Blocki,
N. Li, S. Jha, USENIX Security 2017, section 4.1: her own item with probability
p = e^eps / (e^eps + d - 1), each other one with q = 1 / (e^eps + d - 1)); the server estimates
every item, (count - n q) / (p - q), and returns the k largest positive estimates as identified
items. It lists every item of the domain, and says so in its tags: ldpbench refuses it on a
domain of 64-bit strings. Its one round's oracle is declared (round_oracles) so that the
conformance kit audits what the round really sends. Replace the body with your protocol; keep the
kit passing (tests/).
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench import hookimpl
from ldpbench.params import Param
from ldpbench.types import IdentifiedItems, Oracle, Protocol, ProtocolTags


class ${cls}Round(Oracle):
    """The round's frequency oracle: k-RR over d items (the protocol draws its reports with it)."""

    name = "${name}-round"

    def __init__(self, d, epsilon, **params):
        super().__init__(d=d, epsilon=epsilon, **params)
        self.d, self.epsilon = int(d), float(epsilon)
        e = math.exp(self.epsilon)
        self._p, self._q = e / (e + self.d - 1), 1.0 / (e + self.d - 1)

    @property
    def p_star(self):
        return self._p

    @property
    def q_star(self):
        return self._q

    def perturb(self, values, rng):
        values = np.asarray(values, dtype=np.int64)
        keep = rng.random(values.size) < self._p
        other = (values + rng.integers(1, max(self.d, 2), size=values.size)) % self.d
        return np.where(keep, values, other)

    def support_counts(self, reports):
        return np.bincount(reports, minlength=self.d)

    def output_table(self):
        """P(report | item): p on the diagonal, q elsewhere, and each report's support (itself)."""
        table = np.full((self.d, self.d), self._q)
        np.fill_diagonal(table, self._p)
        return table, np.eye(self.d, dtype=bool)

    def output_rows(self, reports):
        return np.asarray(reports, dtype=np.int64)

    def support_matrix(self, reports):
        return np.asarray(reports)[:, None] == np.arange(self.d)[None, :]


class ${cls}(Protocol):
    """k-RR over [d], then the k largest estimates (see the module docstring)."""

    name = "${name}"
    params = (Param("k", int, 8, "how many heavy hitters to identify", min=1, max=10**6),)

    def tags(self):
        return ProtocolTags(result="identified-items", enumerates_domain=True)

    def privacy_accounting(self, epsilon):
        return [{"group": "all users", "model": "local", "epsilon": float(epsilon), "per_round": [float(epsilon)]}]

    def round_oracles(self, epsilon, domain):
        return [("round 0", ${cls}Round, float(epsilon))]

    def run(self, population, epsilon, rng, *, simulation="aggregate"):
        # One code path: the users' reports are drawn one by one (exact in both simulation modes).
        oracle = ${cls}Round(d=population.d, epsilon=epsilon)
        items = np.repeat(np.arange(population.d), population.counts)
        counts = oracle.support_counts(oracle.perturb(items, rng))
        n = population.n
        estimates = (counts - n * oracle.q_star) / (oracle.p_star - oracle.q_star) / n
        top = np.argsort(-estimates, kind="stable")[: self.k]
        top = top[estimates[top] > 0]
        return {
            "top-k": IdentifiedItems(
                items=top.astype(np.uint64),
                frequencies=estimates[top],
                n=n,
                epsilon=float(epsilon),
                k=self.k,
                bits_per_user=float(max(1, math.ceil(math.log2(population.d)))),
                rounds=({"users": n, "epsilon": float(epsilon), "candidates": population.d},),
            )
        }


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(${cls})
''')

ATTACK_MODULE = Template('''"""${name}: a data-poisoning attack on GRR, as an ldpbench attack (docs/poisoning.md).

Each of the m fake users reports a target item directly, skipping the randomization: against
generalized randomized response this is the maximal gain attack of X. Cao, J. Jia, N. Z. Gong,
"Data Poisoning Attacks to Local Differential Privacy Protocols" (USENIX Security 2021, section
3.3), with expected gain beta (1 - f_T) + beta (d - r) / (e^eps - 1). Replace the body with your
attack; keep the kit passing (tests/).
"""

from __future__ import annotations

from ldpbench import hookimpl
from ldpbench.types import Attack


class ${cls}(Attack):
    """Fake users report a target drawn uniformly (GRR's report encoding: an item index)."""

    name = "${name}"
    oracles = ("grr",)

    def craft(self, oracle, targets, m, rng):
        return targets[rng.integers(0, len(targets), size=m)]


@hookimpl
def ldpbench_register_attacks(registry):
    registry.register(${cls})
''')

ORACLE = KindExample(
    ORACLE_MODULE,
    Template(
        "datasets:\n  - zipf: {d: 1024, n: 20000, s: 1.2}\noracles: [${name}, grr]\n"
        "pipelines: [base, norm-sub]\nmetrics: [mse]\n"
    ),
    audit=True,
)
POSTPROCESSOR = KindExample(
    POSTPROCESSOR_MODULE,
    Template(
        "datasets:\n  - zipf: {d: 1024, n: 20000, s: 1.2}\noracles: [grr, oue]\n"
        "pipelines: [base, ${name}, [${name}, norm-sub]]\nmetrics: [mse]\n"
    ),
)
METRIC = KindExample(
    METRIC_MODULE,
    Template(
        "datasets:\n  - zipf: {d: 1024, n: 20000, s: 1.2}\noracles: [grr, oue]\n"
        "pipelines: [base, norm-sub]\nmetrics: [mse, ${name}]\n"
    ),
)
DATASET = KindExample(
    DATASET_MODULE,
    Template(
        "datasets:\n  - ${name}: {d: 1024, n: 20000}\noracles: [grr, oue]\npipelines: [base, norm-sub]\nmetrics: [mse]\n"
    ),
)
PROTOCOL = KindExample(
    PROTOCOL_MODULE,
    Template(
        "datasets:\n  - zipf: {d: 256, n: 50000, s: 1.2}\noracles: [${name}, fo-threshold]\n"
        "pipelines: [base]\nmetrics: [topk-f1, ncr]\n"
    ),
)
ATTACK = KindExample(
    ATTACK_MODULE,
    Template(
        "datasets:\n  - zipf: {d: 1024, n: 20000, s: 1.2}\noracles: [grr]\nattacks: [none, ${name}]\n"
        "beta: 0.05\ntargets: {count: 2}\npipelines: [base, norm-sub]\nmetrics: [frequency-gain, mse]\n"
    ),
)
