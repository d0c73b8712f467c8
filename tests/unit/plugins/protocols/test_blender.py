"""Blender ([A17]; plugins/protocols/blender.py): blending, the protocol's outputs and its privacy
accounting (docs/algorithms.md §8.1, §8.6), and through the runner: the guarantee each group
received, as the run manifest records it (issue 6), and the spec's simulation mode reaching the
protocol."""

from __future__ import annotations

import json

import numpy as np
import pytest
from support import builtin_plugins

import ldpbench
from ldpbench.engine.mechanism import mechanism_outputs
from ldpbench.errors import ParamError
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec_text
from ldpbench.types import Population
from ldpbench_plugins.protocols.blender import Blender, blend, blend_weights

# -- blending (Theorem 6) ---------------------------------------------------------------------


def test_blend_weight_minimizes_the_blended_variance():
    rng = np.random.default_rng(2)
    vo, vc = rng.uniform(1e-6, 1e-3, 50), rng.uniform(1e-6, 1e-3, 50)
    w = blend_weights(vo, vc)
    assert np.all((w >= 0) & (w <= 1))
    best = w**2 * vo + (1 - w) ** 2 * vc
    np.testing.assert_allclose(best, vo * vc / (vo + vc), rtol=1e-12)
    grid = np.linspace(0, 1, 1001)[:, None]
    assert np.all(best <= (grid**2 * vo + (1 - grid) ** 2 * vc).min(axis=0) + 1e-18)
    p, var, w2 = blend(np.full(50, 0.1), vo, np.full(50, 0.3), vc)
    np.testing.assert_allclose(p, w * 0.1 + (1 - w) * 0.3)
    np.testing.assert_allclose(var, best)
    # the more precise input gets the larger weight
    assert blend_weights(1e-6, 1e-3) > 0.99 and blend_weights(1e-3, 1e-6) < 0.01


# -- the protocol -----------------------------------------------------------------------------


def record_population(queries: int = 300, urls: int = 5, n: int = 400_000, seed: int = 0) -> Population:
    rng = np.random.default_rng(seed)
    pq = np.arange(1, queries + 1) ** -1.0
    pu = np.arange(1, urls + 1) ** -1.5
    p = (pq[:, None] / pq.sum() * (pu / pu.sum())[None, :]).ravel()
    return Population(rng.multinomial(n, p), name="zipf-records", parents=np.repeat(np.arange(queries), urls))


def test_run_returns_three_estimates_on_one_head_list():
    pop = record_population()
    out = Blender(**_defaults(head_list_size=20)).run(pop, 4.0, np.random.default_rng(5))
    assert list(out) == ["opt-in", "client", "blended"]
    items = out["blended"].items
    assert 0 < items.size <= 20
    assert np.all(pop.counts[items] > 0)
    for label, est in out.items():
        np.testing.assert_array_equal(est.items, items)
        assert est.mechanism == f"blender:{label}" and est.epsilon == 4.0
        assert est.variance.shape == est.frequencies.shape
        info = est.info
        assert info["head_list_size"] == items.size and info["group"] == label
        assert len(info["item_query"]) == items.size
        np.testing.assert_array_equal(np.asarray(info["queries"])[info["item_query"]], pop.parents[items])
        assert len(info["query_frequencies"]) == len(info["queries"])
        # projected: non-negative, and with <*,*> sums to 1
        assert est.frequencies.min() >= 0
        assert est.frequencies.sum() + info["star"]["frequency"] == pytest.approx(1.0)
        assert sum(info["query_frequencies"]) + info["star_query"]["frequency"] == pytest.approx(1.0)
    users = out["blended"].info["users"]
    assert users["S"] + users["T"] + users["C"] == pop.n
    assert users["S"] + users["T"] == round(0.05 * pop.n)
    assert out["client"].n == users["C"] and out["blended"].n == pop.n
    w = np.asarray(out["blended"].info["weights"])
    assert np.all((w >= 0) & (w <= 1))


def test_run_is_reproducible_and_unprojected_output_is_raw():
    pop = record_population()
    a = Blender(**_defaults(project=False)).run(pop, 4.0, np.random.default_rng(9))
    b = Blender(**_defaults(project=False)).run(pop, 4.0, np.random.default_rng(9))
    np.testing.assert_array_equal(a["blended"].frequencies, b["blended"].frequencies)
    w = np.asarray(a["blended"].info["weights"])
    np.testing.assert_allclose(
        a["blended"].frequencies, w * a["opt-in"].frequencies + (1 - w) * a["client"].frequencies, rtol=1e-12
    )


def test_project_groups_blended_projects_only_the_blend():
    # [A17] Fig. 7 step 5 projects the blended estimate; opt-in and client stay as estimated.
    pop = record_population()
    raw = Blender(**_defaults(project=False)).run(pop, 1.0, np.random.default_rng(9))
    only = Blender(**_defaults(project_groups="blended")).run(pop, 1.0, np.random.default_rng(9))
    every = Blender(**_defaults()).run(pop, 1.0, np.random.default_rng(9))
    for label in ("opt-in", "client"):
        np.testing.assert_array_equal(only[label].frequencies, raw[label].frequencies)
        assert only[label].info["projected_groups"] == "blended"
    np.testing.assert_array_equal(only["blended"].frequencies, every["blended"].frequencies)
    assert raw["client"].frequencies.min() < 0  # so the test can tell the two apart
    assert not np.array_equal(only["client"].frequencies, every["client"].frequencies)


def test_run_on_a_flat_population_and_per_user_sampler():
    pop = Population(
        np.random.default_rng(1).multinomial(200_000, np.arange(1, 101) ** -1.2 / (np.arange(1, 101) ** -1.2).sum())
    )
    out = Blender(**_defaults(client_sampler="per-user", head_list_size=10)).run(pop, 2.0, np.random.default_rng(2))
    est = out["blended"]
    assert est.items.size == 10
    np.testing.assert_array_equal(np.sort(est.info["queries"]), np.sort(est.items))  # each item its own query


def test_run_with_an_empty_head_list():
    pop = Population(np.full(1000, 1))  # nobody shares a record: nothing passes tau
    out = Blender(**_defaults()).run(pop, 4.0, np.random.default_rng(0))
    for est in out.values():
        assert est.items.size == 0 and est.frequencies.size == 0
        assert est.info["star"]["frequency"] == pytest.approx(1.0)


def test_run_rejects_too_small_groups():
    pop = Population(np.array([10, 10]))
    with pytest.raises(ParamError, match="at least 2"):
        Blender(**_defaults()).run(pop, 4.0, np.random.default_rng(0))
    with pytest.raises(ParamError):
        Blender(**_defaults()).run(record_population(), float("inf"), np.random.default_rng(0))


def test_privacy_accounting_names_each_groups_guarantee():
    proto = Blender(**_defaults(delta=1e-7, opt_in_fraction=0.025))
    acc = proto.privacy_accounting(4.0)
    assert [e["model"] for e in acc] == ["central", "central", "local"]
    assert [e["delta"] for e in acc] == [1e-7, 0.0, 1e-7]
    assert all(e["epsilon"] == 4.0 for e in acc)
    assert "Laplace" in acc[1]["algorithm"]
    assert all("mechanism" not in e for e in acc)  # the runner adds the mechanism label
    client = acc[2]
    assert client["query_stage"]["epsilon"] + client["url_stage"]["epsilon"] == pytest.approx(4.0)
    assert client["query_stage"]["epsilon"] == pytest.approx(0.85 * 4.0)
    assert client["query_stage"]["delta"] + client["url_stage"]["delta"] == pytest.approx(1e-7)
    assert sum(e["share_of_users"] for e in acc) == pytest.approx(1.0)
    assert acc[0]["share_of_users"] == pytest.approx(0.025 * 0.95)


def test_blender_is_registered_with_paper_defaults(plugins):
    proto = plugins.create("protocol", "blender", {})
    assert (proto.delta, proto.opt_in_fraction, proto.f_o, proto.f_c) == (1e-5, 0.05, 0.95, 0.85)
    assert (proto.head_list_size, proto.m_o, proto.m_c) == (50, 1, 1)


def _defaults(**changes):
    values = {p.name: p.default for p in Blender.params}
    values.update(changes)
    return values


@pytest.mark.parametrize("project", [True, False])
def test_query_only_population_is_modelled_as_query_star_records(project):
    """A population without record structure (aol-queries) holds (q, *) records: each listed query
    has one URL slot, and every group's record estimate is its query estimate."""
    rng = np.random.default_rng(1)
    pmf = np.arange(1, 301) ** -1.1
    pop = Population(rng.multinomial(400_000, pmf / pmf.sum()))
    out = Blender(**_defaults(head_list_size=20, project=project)).run(pop, 4.0, np.random.default_rng(2))
    for est in out.values():
        info = est.info
        assert info["records"] == "(query, *)"
        query_of_record = np.asarray(info["queries"])[info["item_query"]]
        np.testing.assert_array_equal(query_of_record, est.items)  # each item its own query
        q = np.asarray(info["query_frequencies"])[info["item_query"]]
        # bitwise before the projection; the projection runs on records and queries separately
        np.testing.assert_allclose(est.frequencies, q, rtol=0, atol=0 if not project else 1e-15)
        np.testing.assert_array_equal(est.variance, np.asarray(info["query_variance"])[info["item_query"]])
        assert info["star"]["frequency"] == pytest.approx(info["star_query"]["frequency"], abs=1e-15)
        assert info["star"]["variance"] == pytest.approx(info["star_query"]["variance"], rel=1e-12)
    # the same counts declared as one real URL per query: two URL slots, a noisier record estimate
    structured = pop.replace(parents=np.arange(pop.d))
    old = Blender(**_defaults(head_list_size=20, project=project)).run(structured, 4.0, np.random.default_rng(2))
    assert old["client"].info["records"] == "(query, URL)"
    np.testing.assert_array_equal(old["client"].items, out["client"].items)
    assert np.all(old["client"].variance > 2 * out["client"].variance)


# -- the simulation mode and the query-estimate digest ---------------------------------------------


def test_client_sampler_follows_the_run_simulation_unless_given():
    pop = record_population(queries=100, n=100_000)
    default = Blender(**_defaults(head_list_size=10))
    assert default.client_sampler is None
    runs = {
        "default": default.run(pop, 4.0, np.random.default_rng(3)),
        "per-user run": default.run(pop, 4.0, np.random.default_rng(3), simulation="per-user"),
        "aggregate run": default.run(pop, 4.0, np.random.default_rng(3), simulation="aggregate"),
        "per-user param": Blender(**_defaults(head_list_size=10, client_sampler="per-user")).run(
            pop, 4.0, np.random.default_rng(3), simulation="aggregate"
        ),
    }
    sampler = {k: v["client"].info["client_sampler"] for k, v in runs.items()}
    assert sampler == {
        "default": "aggregate",
        "per-user run": "per-user",
        "aggregate run": "aggregate",
        "per-user param": "per-user",
    }
    client = {k: v["client"].frequencies for k, v in runs.items()}
    np.testing.assert_array_equal(client["default"], client["aggregate run"])
    np.testing.assert_array_equal(client["per-user run"], client["per-user param"])
    assert not np.array_equal(client["default"], client["per-user run"])
    with pytest.raises(ParamError, match="simulation"):
        default.run(pop, 4.0, np.random.default_rng(3), simulation="exact")


def test_each_estimate_carries_the_digest_of_its_record_vector():
    out = Blender(**_defaults(head_list_size=10)).run(record_population(), 4.0, np.random.default_rng(6))
    digests = set()
    for est in out.values():
        assert est.query_estimates.frequencies_digest == est.frequencies_digest()
        assert est.current_query_estimates() is est.query_estimates
        np.testing.assert_array_equal(est.query_estimates.frequencies, est.info["query_frequencies"])
        digests.add(est.query_estimates.frequencies_digest)
    assert len(digests) == 3


TINY = {
    "name": "blender-manifest",
    "seed": 3,
    "repeats": 1,
    "datasets": [{"synthetic-search": {"users": 20_000, "queries": 300, "urls_per_query": 3}}],
    "epsilons": [2, 4],
    "oracles": [{"blender": {"delta": 1e-6, "opt_in_fraction": 0.1, "f_c": 0.8, "head_list_size": 5}}, "grr"],
    "metrics": ["l1"],
}


def test_the_manifest_records_each_groups_guarantee(tmp_path):
    outcome = ldpbench.run(TINY, tmp_path / "run", workers=1)
    assert outcome.failed_rows == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    privacy = manifest["privacy"]
    label = "blender(delta=1e-06,opt_in_fraction=0.1,f_c=0.8,head_list_size=5)"
    assert label in manifest["spec"]["oracles"]  # the resolved spec states delta
    for eps in (2.0, 4.0):
        entries = [e for e in privacy if e["mechanism"] == label and e["epsilon"] == eps]
        by_group = {e["group"]: e for e in entries}
        assert len(by_group) == 3, entries
        s = by_group["opt-in, head-list creation (S)"]
        t = by_group["opt-in, probability estimation (T)"]
        c = by_group["clients"]
        # S: central (eps, delta); T: central (eps, 0); clients: local (eps, delta)
        assert (s["model"], s["epsilon"], s["delta"]) == ("central", eps, 1e-6)
        assert (t["model"], t["epsilon"], t["delta"]) == ("central", eps, 0.0)
        assert (c["model"], c["epsilon"], c["delta"]) == ("local", eps, 1e-6)
        # LocalAlg's split: queries (f_C eps, f_C delta), URLs the rest ([A17] Fig. 6 lines 2-3)
        assert c["query_stage"]["epsilon"] == pytest.approx(0.8 * eps)
        assert c["query_stage"]["delta"] == pytest.approx(0.8e-6)
        assert c["url_stage"]["epsilon"] == pytest.approx(0.2 * eps)
        assert c["url_stage"]["delta"] == pytest.approx(0.2e-6)
        # the groups partition the users
        assert s["share_of_users"] == pytest.approx(0.1 * 0.95)
        assert t["share_of_users"] == pytest.approx(0.1 * 0.05)
        assert c["share_of_users"] == pytest.approx(0.9)
        # the baseline: every user local (eps, 0)
        (grr,) = [e for e in privacy if e["mechanism"] == "grr" and e["epsilon"] == eps]
        assert (grr["group"], grr["model"], grr["delta"]) == ("all users", "local", 0.0)


def test_the_spec_simulation_mode_drives_blenders_client_sampler():
    plugins = builtin_plugins()
    text = json.dumps({**TINY, "simulation": "per-user", "epsilons": [4], "oracles": ["blender"]})
    spec = load_spec_text(text, plugins, "<spec>")
    cell = next(iter(expand(spec)))
    population = plugins.create("dataset", "synthetic-search", dict(spec.datasets[0].param_dict)).load(
        np.random.default_rng(0)
    )
    out = mechanism_outputs(plugins, cell, population)
    assert {e.info["client_sampler"] for e in out.values()} == {"per-user"}
