"""Record datasets: search-log, synthetic-search and the shipped aol-queries."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources

import numpy as np
import pytest

from ldpbench.errors import UsageError

AOL_FILE_HEADER = "AnonID\tQuery\tQueryTime\tItemRank\tClickURL\n"


def load(plugins, name, seed=0, **params):
    return plugins.create("dataset", name, params).load(np.random.default_rng(seed))


def test_search_log_three_columns(plugins, tmp_path):
    log = tmp_path / "log.tsv"
    log.write_text("u1\tfoo\thttp://a\nu1\tfoo\thttp://a\nu2\tfoo\thttp://b\nu3\tbar\t\nu4\tbaz\thttp://z\n\n")
    pop = load(plugins, "search-log", path=str(log), one_record_per_user=False)
    assert pop.labels == ["baz\thttp://z", "foo\thttp://a", "foo\thttp://b"]  # clicks only, sorted
    np.testing.assert_array_equal(pop.counts, [1, 2, 1])
    assert pop.parent_labels == ["baz", "foo"]
    np.testing.assert_array_equal(pop.parents, [0, 1, 1])
    pop = load(plugins, "search-log", path=str(log), one_record_per_user=False, clicks_only=False)
    assert "bar\t" in pop.labels and pop.n == 5


def test_search_log_aol_format_with_repeated_headers(plugins, tmp_path):
    log = tmp_path / "aol.txt"
    log.write_text(
        AOL_FILE_HEADER
        + '1\tfoo "bar\t2006-03-01 00:00:00\t1\thttp://a\n'
        + "1\tnoclick\t2006-03-01 00:01:00\t\t\n"
        + AOL_FILE_HEADER
        + '2\tfoo "bar\t2006-03-02 00:00:00\t3\thttp://a\n'
    )
    pop = load(plugins, "search-log", path=str(log))
    assert pop.labels == ['foo "bar\thttp://a'] and pop.n == 2  # one record per user, clicks only


def test_one_record_per_user_is_a_uniform_choice(plugins, tmp_path):
    users = 4000
    lines = "".join(f"u{i}\tq\thttp://a\nu{i}\tq\thttp://b\n" for i in range(users))
    log = tmp_path / "log.tsv"
    log.write_text(lines)
    pop = load(plugins, "search-log", seed=1, path=str(log))
    assert pop.n == users
    a = int(pop.counts[pop.labels.index("q\thttp://a")])
    assert abs(a - users / 2) < 5.5 * np.sqrt(users / 4)  # always the first line would give 4000
    again = load(plugins, "search-log", seed=1, path=str(log))
    np.testing.assert_array_equal(again.counts, pop.counts)


def test_search_log_errors(plugins, tmp_path):
    with pytest.raises(UsageError, match="not found"):
        load(plugins, "search-log", path=str(tmp_path / "missing.tsv"))
    empty = tmp_path / "noclicks.tsv"
    empty.write_text("u1\tq\t\n")
    with pytest.raises(UsageError, match="no"):
        load(plugins, "search-log", path=str(empty))


def test_synthetic_search(plugins):
    pop = load(plugins, "synthetic-search", users=200_000, queries=1000, urls_per_query=8)
    assert pop.n == 200_000 and pop.info["synthetic"] is True
    assert pop.parents.size == pop.d and np.all(pop.counts > 0)
    assert np.all(np.diff(pop.parents) >= 0)  # records grouped by query
    assert len(pop.parent_labels) == pop.parents.max() + 1
    # Zipf: the most popular query is q0 and its most popular URL dominates its records
    per_query = np.bincount(pop.parents, weights=pop.counts)
    assert pop.parent_labels[int(np.argmax(per_query))] == "q0"
    q0 = pop.counts[pop.parents == 0]
    assert q0[0] == q0.max()
    # deterministic for a given stream
    again = load(plugins, "synthetic-search", users=200_000, queries=1000, urls_per_query=8)
    np.testing.assert_array_equal(again.counts, pop.counts)


def test_aol_queries(plugins):
    pop = load(plugins, "aol-queries")
    assert (pop.n, pop.d) == (657_427, 120_978)
    assert pop.labels[:3] == ["-     ", "google", "myspac"]
    np.testing.assert_array_equal(pop.counts[:5], [18720, 12292, 6132, 5159, 4967])
    # Queries only: records are (query, *), declared by the absence of a URL level (no parents),
    # not as one real URL per query.
    assert pop.parents is None and pop.parent_labels is None
    assert len(set(pop.labels)) == pop.d  # Latin-1 keeps every 6-byte key distinct
    assert "research" in pop.info["terms"]
    dropped = load(plugins, "aol-queries", drop_empty_query=True)
    assert dropped.n == 657_427 - 18_720 and dropped.labels[0] == "google"


def test_shipped_aol_file_is_the_documented_content():
    files = importlib.resources.files("ldpbench_data")
    raw = gzip.decompress(files.joinpath("aol_queries.tsv.gz").read_bytes())
    assert hashlib.sha256(raw).hexdigest() == "e3aeef15b6aa022a6dc9f508cf505fdc041cc0bc5343e1e98f31432619088408"
    note = files.joinpath("aol_queries.md").read_text()
    assert "NON-COMMERCIAL RESEARCH USE ONLY".lower() in note.lower()
    assert "vvv214/LDP_Protocols" in note


def test_aol_queries_give_blender_one_url_slot_per_query(plugins):
    """[A17] on query-only data: a user's record is (q, *), the query's wildcard record, so a listed
    query has the single URL slot <q, *> and its client record estimate is its query estimate (not
    a record with a real URL beside an empty <q, *>, whose estimate pays a URL-stage division)."""
    pop = load(plugins, "aol-queries")
    out = plugins.create("protocol", "blender", {"head_list_size": 10}).run(pop, 4.0, np.random.default_rng(0))
    client = out["client"]
    assert client.info["records"] == "(query, *)"
    q = np.asarray(client.info["query_frequencies"])[client.info["item_query"]]
    # equal up to round-off (the projection runs on the records and on the queries separately)
    np.testing.assert_allclose(client.frequencies, q, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(client.variance, np.asarray(client.info["query_variance"])[client.info["item_query"]])
