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

MULTIDIM_PROTOCOL_MODULE = Template('''"""${name}: users with several attributes, each reported at a share of the budget, as an
ldpbench multidimensional protocol.

Splitting the budget (SPL; T. Wang et al., "Collecting and Analyzing Multidimensional Data with
Local Differential Privacy", ICDE 2019): a user holding (x_1, ..., x_a), attribute j over [d_j],
reports every attribute with generalized randomized response at epsilon / a (k-RR: her own value
with probability p = e^e / (e^e + d_j - 1), each other value with q = 1 / (e^e + d_j - 1),
e = epsilon / a); sequential composition makes the whole report epsilon-LDP. The server estimates
each attribute's histogram, (count / n - q) / (p - q), unbiased. It takes users who hold tuples
(records = "tuple": datasets such as adult-attributes) and returns one estimate per attribute,
labelled by the attribute's name; the conformance kit audits its whole report (report_table)
against what record_accounting declares. Replace the body with your protocol; keep the kit passing
(tests/).
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench import hookimpl
from ldpbench.types import Estimate, Protocol, ProtocolTags


def krr(d, epsilon):
    """(p, q) of k-RR over d values."""
    e = math.exp(epsilon)
    return e / (e + d - 1), 1.0 / (e + d - 1)


class ${cls}(Protocol):
    """Every attribute reported with k-RR at epsilon / a (see the module docstring)."""

    name = "${name}"

    def tags(self):
        return ProtocolTags(result="frequencies", enumerates_domain=True, records=("tuple",))

    def privacy_accounting(self, epsilon):
        return [{"group": "all users", "model": "local", "epsilon": float(epsilon), "per_round": [float(epsilon)]}]

    def record_accounting(self, epsilon, sizes):
        """Each attribute at epsilon / a; the whole report over any two records epsilon, over
        records differing in one attribute epsilon / a."""
        a = len(sizes)
        return {"per_attribute": [epsilon / a] * a, "any_records": float(epsilon), "one_attribute": epsilon / a}

    def run(self, population, epsilon, rng, *, simulation="aggregate"):
        attrs = population.attributes  # the users' rows: attrs.rows[i, j] is user i's value of attribute j
        n, a = attrs.n, attrs.a
        out = {}
        for j, name in enumerate(attrs.names):
            d = attrs.sizes[j]
            p, q = krr(d, epsilon / a)
            if simulation == "per-user":
                counts = np.bincount(self._perturb(attrs.rows[:, j], d, p, q, rng), minlength=d)
            else:  # exact in distribution: keep w.p. p - q, else a uniform value (maybe one's own)
                kept = rng.binomial(attrs.marginal_counts(j), p - q)
                counts = kept + rng.multinomial(n - int(kept.sum()), np.full(d, 1.0 / d))
            out[name] = Estimate(
                frequencies=(counts / n - q) / (p - q),
                n=n,
                epsilon=float(epsilon),
                mechanism=self.name,
                p_star=p,
                q_star=q,
                variance=np.full(d, q * (1 - q) / (n * (p - q) ** 2)),
                support_counts=counts.astype(np.int64),
            )
        return out

    @staticmethod
    def _perturb(values, d, p, q, rng):
        keep = rng.random(values.size) < p - q
        return np.where(keep, values, rng.integers(0, d, size=values.size))

    # -- the whole report, for the audit: its exact law and draws of it -------------------------
    def report_table(self, sizes, epsilon):
        """P[x, y] over every record x and whole report y (both row-major over the attributes):
        the attributes' k-RR laws at epsilon / a, independent given the record."""
        table = np.ones((1, 1))
        for d in sizes:
            p, q = krr(d, epsilon / len(sizes))
            table = np.kron(table, np.where(np.eye(d, dtype=bool), p, q))
        return table

    def perturb_records(self, rows, sizes, epsilon, rng):
        """Whole reports of the users' records, as report_table columns."""
        reports = [
            self._perturb(np.asarray(rows)[:, j], d, *krr(d, epsilon / len(sizes)), rng) for j, d in enumerate(sizes)
        ]
        return np.ravel_multi_index(tuple(reports), tuple(sizes))


@hookimpl
def ldpbench_register_protocols(registry):
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


LONGITUDINAL_MODULE = Template('''"""${name}: memoized randomized response over rounds (L-GRR), as an ldpbench protocol.

Users report their item in every round of a population over rounds (records ``sequence``). A
user holding x reports IRR(PRR(x)): the permanent randomized response PRR(x) is GRR over the d
items at eps_inf (the spec's epsilon), drawn once per user and value and memoized; the
instantaneous one is GRR again, drawn afresh for every report, with its probability chosen so
that one report is exactly eps_1 = alpha * eps_inf (Arcolezi, Pinzon, Palamidessi & Gambs,
"Frequency Estimation of Evolving Data Under Local Differential Privacy", EDBT 2023, section 3.2;
RAPPOR's memoization, Erlingsson, Pihur & Korolova, CCS 2014). Any number of reports of one value
reveal at most eps_inf. One report supports x with probability p* = p1 p2 + (1 - p1) q2 and any
other item with q* = q1 p2 + (1 - q1) q2; each round's estimate (C_v / n - q*) / (p* - q*) is
unbiased. static_supports gives the averaging audit (ldpbench audit ${name}) the protocol's own
reports. Replace the body with your protocol; keep the kit passing (tests/).
"""

from __future__ import annotations

import math

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import NotApplicable
from ldpbench.params import Param
from ldpbench.types import Estimate, Protocol, ProtocolTags


def _grr(d, eps):
    e = math.exp(eps)
    return e / (e + d - 1), 1.0 / (e + d - 1)


class ${cls}(Protocol):
    """Memoized GRR then GRR over rounds (see the module docstring)."""

    name = "${name}"
    params = (Param("alpha", float, 0.5, "eps_1 / eps_inf: one report's share", min=0.01, max=0.99),)

    def tags(self):
        # One estimate per round, of users holding one item per round. The one code path below
        # draws every user's reports: exact in both simulation modes.
        return ProtocolTags(result="frequencies", enumerates_domain=True, records=("sequence",))

    def layers(self, d, epsilon):
        """(p1, q1, p2, q2): the PRR at eps_inf, the IRR making one report eps_1-LDP. p* and q*
        are linear in p2 (q2 = (1 - p2)/(d - 1)), so p* = e^eps_1 q* is solved in closed form."""
        p1, q1 = _grr(d, epsilon)
        a, e = 1.0 / (d - 1), math.exp(self.alpha * epsilon)
        A, B, C, D = p1 - (1 - p1) * a, (1 - p1) * a, q1 - (1 - q1) * a, (1 - q1) * a
        p2 = (e * D - B) / (A - e * C)
        if not 1.0 / d < p2 <= 1:
            raise NotApplicable(f"no GRR instantaneous layer gives eps_1 = {self.alpha * epsilon:g}")
        return p1, q1, p2, (1 - p2) * a

    def privacy_accounting(self, epsilon):
        eps = float(epsilon)
        return [
            {
                "group": "all users",
                "model": "local",
                "epsilon": eps,
                "epsilon_inf": eps,
                "epsilon_1": self.alpha * eps,
                "on_change": "a new permanent response for the new value: eps_inf again per distinct value held",
            }
        ]

    def _irr(self, prr, d, p2, q2, rng):
        """Keep the PRR output with probability p2 - q2, else a uniform item (GRR as a mixture)."""
        return np.where(rng.random(prr.shape) < p2 - q2, prr, rng.integers(0, d, size=prr.shape))

    def static_supports(self, d, epsilon, values, T, rng):
        """(users, d): how many of T reports of users keeping values[i] support each item."""
        p1, q1, p2, q2 = self.layers(d, epsilon)
        values = np.asarray(values, dtype=np.int64)
        prr = np.where(rng.random(values.size) < p1 - q1, values, rng.integers(0, d, size=values.size))
        reports = self._irr(np.repeat(prr[:, None], T, axis=1), d, p2, q2, rng)  # (users, T)
        out = np.zeros((values.size, d), dtype=np.int64)
        np.add.at(out, (np.repeat(np.arange(values.size), T), reports.ravel()), 1)
        return out

    def run(self, population, epsilon, rng, *, simulation="aggregate"):
        rounds = population.rounds
        if rounds is None:
            raise NotApplicable("${name} collects over rounds: it needs a sequence population")
        d, (T, n) = population.d, rounds.items.shape
        p1, q1, p2, q2 = self.layers(d, epsilon)
        # One PRR per (user, value) pair, memoized: a user returning to a value reuses it.
        pairs, which = np.unique(np.arange(n)[None, :] * d + rounds.items, return_inverse=True)
        values = pairs % d
        prr = np.where(rng.random(values.size) < p1 - q1, values, rng.integers(0, d, size=values.size))
        p_star, q_star = p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2
        variance = np.full(d, q_star * (1 - q_star) / (n * (p_star - q_star) ** 2))
        info = {"epsilon_inf": float(epsilon), "epsilon_1": self.alpha * float(epsilon)}
        out = {}
        for t in range(T):  # one vectorized draw per round
            reports = self._irr(prr[which.reshape(T, n)[t]], d, p2, q2, rng)
            counts = np.bincount(reports, minlength=d)
            out[f"round-{t + 1}"] = Estimate(
                frequencies=(counts / n - q_star) / (p_star - q_star),
                n=n,
                epsilon=float(epsilon),
                mechanism=self.name,
                variance=variance,
                info=info,
            )
        return out


@hookimpl
def ldpbench_register_protocols(registry):
    registry.register(${cls})
''')

LONGITUDINAL = KindExample(
    LONGITUDINAL_MODULE,
    Template(
        "datasets:\n  - zipf-rounds: {d: 32, n: 5000, s: 1.5, rounds: 3, model: redraw, r: 0.1}\n"
        "oracles: [${name}, l-grr]\npipelines: [base]\nmetrics: [mse]\n"
    ),
)
MULTIDIM_PROTOCOL = KindExample(
    MULTIDIM_PROTOCOL_MODULE,
    Template(
        'datasets:\n  - adult-attributes: {attributes: "age,education,race,sex"}\noracles: [${name}, spl]\n'
        "pipelines: [base, norm-sub]\nmetrics: [mse]\n"
    ),
)


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

ATTACK = KindExample(
    ATTACK_MODULE,
    Template(
        "datasets:\n  - zipf: {d: 1024, n: 20000, s: 1.2}\noracles: [grr]\nattacks: [none, ${name}]\n"
        "beta: 0.05\ntargets: {count: 2}\npipelines: [base, norm-sub]\nmetrics: [frequency-gain, mse]\n"
    ),
)
