"""Search logs as record populations: users hold (query, URL) records ([A17] §4).

A record population is a flat histogram over the distinct records, so that any frequency oracle
can run on it, with the query -> URL hierarchy kept alongside: ``Population.parents[r]`` is the
index of record ``r``'s query in ``Population.parent_labels``, and ``labels[r]`` is
``"<query>\\t<url>"``. Records are ordered by (query, URL).

- ``search-log``: your own tab-separated log, one line per (user, query, clicked URL); as in
  [A17] one record is sampled per user.
- ``synthetic-search``: a synthetic log, power-law query popularity and per-query power-law URL
  popularity; the defaults are sized like [A17]'s AOL sample (657,427 users, one record each).
- ``aol-queries``: the shipped AOL-2006 query histogram (queries only: every record is
  ``(query, *)``; see :class:`AOLQueries` for how that is expressed).
"""

from __future__ import annotations

import gzip
import importlib.resources
from pathlib import Path

import numpy as np

from ldpbench import hookimpl
from ldpbench.errors import UsageError
from ldpbench.params import Param
from ldpbench.types import Dataset, Population
from ldpbench.util.safeio import check_regular_file

from .synthetic import MAX_DOMAIN  # the synthetic datasets share one domain limit (why: there)

#: The most users a synthetic search log holds: each is a (query, URL) pair of Python strings
#: while the log is built, about 100 bytes, so 10**7 users take about a gigabyte.
MAX_LOG_USERS = 10**7
#: The header line of the AOL-2006 release files (user, query, time, rank, clicked URL).
AOL_HEADER = "AnonID"


def record_population(user_queries: np.ndarray, user_urls: np.ndarray, name: str, info: dict) -> Population:
    """The record population of users holding ``(query, url)`` (one record per user)."""
    import polars as pl

    table = (
        pl.DataFrame({"query": user_queries, "url": user_urls}, schema={"query": pl.String, "url": pl.String})
        .group_by(["query", "url"])
        .len()
        .sort(["query", "url"])
    )
    queries = table["query"]
    new_query = (
        np.concatenate([[True], (queries[1:] != queries[:-1]).to_numpy()]) if table.height else np.zeros(0, bool)
    )
    parents = np.cumsum(new_query) - 1
    labels = (queries + "\t" + table["url"]).to_list()
    return Population(
        table["len"].to_numpy().astype(np.int64),
        name=name,
        labels=labels,
        parents=parents.astype(np.int64),
        parent_labels=queries.filter(pl.Series(new_query)).to_list(),
        info=info,
    )


def read_search_log(path: Path, clicks_only: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Users, queries and URLs (string arrays) from a tab-separated log.

    Layouts: three columns ``user<TAB>query<TAB>url`` (no header), or the AOL-2006 release format
    (``AnonID Query QueryTime ItemRank ClickURL``, recognized by its header line, which may repeat
    when files are concatenated). A missing URL is an empty string (a query without a click);
    ``clicks_only`` drops those lines.
    """
    import polars as pl

    if not path.exists():
        raise UsageError(f"search log not found: {path}")
    check_regular_file(path, "search log")  # a FIFO would block the reader, a device never end
    try:
        lines = pl.read_csv(
            path,
            separator="\x1f",
            has_header=False,
            quote_char=None,
            new_columns=["line"],
            encoding="utf8-lossy",
            infer_schema_length=0,  # every column a string (infer_schema=False is polars >= 1.2)
            truncate_ragged_lines=True,
        )
    except pl.exceptions.NoDataError:
        raise UsageError(f"{path}: the search log is empty") from None
    parts = pl.col("line").str.split("\t")
    first = lines["line"][0] if lines.height else None
    aol = first is not None and first.split("\t", 1)[0] == AOL_HEADER
    url_col = 4 if aol else 2
    table = lines.select(
        user=parts.list.get(0, null_on_oob=True),
        query=parts.list.get(1, null_on_oob=True),
        url=parts.list.get(url_col, null_on_oob=True).fill_null(""),
    ).filter(pl.col("user").is_not_null() & (pl.col("user") != "") & pl.col("query").is_not_null())
    if aol:
        table = table.filter(pl.col("user") != AOL_HEADER)
    if clicks_only:
        table = table.filter(pl.col("url") != "")
    if table.height == 0:
        raise UsageError(f"{path}: no (user, query{', clicked URL' if clicks_only else ''}) lines found")
    return (table["user"].to_numpy(), table["query"].to_numpy(), table["url"].to_numpy())


def one_per_user(users: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Indices of one line per user, each chosen uniformly among that user's lines."""
    _, user_code = np.unique(users, return_inverse=True)
    user_code = user_code.reshape(-1)
    order = np.lexsort((rng.random(user_code.size), user_code))  # by user, random within user
    sorted_users = user_code[order]
    first = np.concatenate([[True], sorted_users[1:] != sorted_users[:-1]])
    return np.sort(order[first])


class SearchLog(Dataset):
    """Your own search log (TSV: user, query, clicked URL; or the AOL-2006 format), as records."""

    name = "search-log"
    params = (
        Param("path", str, help="tab-separated log: user, query, clicked URL (or AOL-2006 format)", path=True),
        Param("one_record_per_user", bool, True, "sample one record per user, as [A17] (false: every line is a user)"),
        Param("clicks_only", bool, True, "drop lines without a clicked URL"),
    )

    def load(self, rng: np.random.Generator) -> Population:
        path = Path(self.path)
        users, queries, urls = read_search_log(path, self.clicks_only)
        lines = users.size
        if self.one_record_per_user:
            keep = one_per_user(users, rng)
            queries, urls = queries[keep], urls[keep]
        info = {
            "source": str(path),
            "lines": int(lines),
            "one_record_per_user": bool(self.one_record_per_user),
            "clicks_only": bool(self.clicks_only),
            "records": True,
        }
        return record_population(queries, urls, path.stem, info)


def zipf_pmf(size: int, exponent: float) -> np.ndarray:
    w = np.arange(1, size + 1, dtype=float) ** (-exponent)
    return w / w.sum()


def _draw(pmf: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    cdf = np.cumsum(pmf)
    return np.searchsorted(cdf, rng.random(size) * cdf[-1], side="right").clip(0, pmf.size - 1)


class SyntheticSearch(Dataset):
    """A synthetic search log (label: synthetic): Zipf query popularity, Zipf URLs within a query.

    Every user draws a query ``q`` with probability proportional to ``(rank q)^(-query_exponent)``
    and then one of the query's ``urls_per_query`` URLs with probability proportional to
    ``(rank u)^(-url_exponent)``; only records that occur are in the domain (as in a real log).
    The defaults are sized like [A17]'s AOL sample (657,427 users) and were chosen so that, at
    eps = 4, a 50-record head list is first reached at about 4.5% opt-in, as [A17] reports for AOL
    (its Fig. 13a line for 50 records starts at 4.5%); URLs are concentrated (exponent 2: the top
    URL of a query takes 63% of its clicks). It is a stand-in, not AOL.
    """

    name = "synthetic-search"
    params = (
        # Every user is a Python string pair while the log is built (about 100 bytes each).
        Param(
            "users",
            int,
            657_427,
            f"number of users, one record each (at most {MAX_LOG_USERS:,})",
            min=1,
            max=MAX_LOG_USERS,
        ),
        # Each is the size of a float vector drawn from (its Zipf pmf and CDF): the same limit.
        Param(
            "queries", int, 4_000_000, f"size of the query vocabulary (at most {MAX_DOMAIN:,})", min=1, max=MAX_DOMAIN
        ),
        Param("urls_per_query", int, 20, f"URLs per query (at most {MAX_DOMAIN:,})", min=1, max=MAX_DOMAIN),
        Param("query_exponent", float, 0.75, "Zipf exponent of query popularity", min=0, max=100),
        Param("url_exponent", float, 2.0, "Zipf exponent of URL popularity within a query", min=0, max=100),
    )

    def load(self, rng: np.random.Generator) -> Population:
        # Inverse-CDF draws: O(users log queries), whatever the vocabulary size.
        user_query = _draw(zipf_pmf(self.queries, self.query_exponent), self.users, rng)
        user_url = _draw(zipf_pmf(self.urls_per_query, self.url_exponent), self.users, rng)
        codes, counts = np.unique(user_query * self.urls_per_query + user_url, return_counts=True)
        query, _ = np.divmod(codes, self.urls_per_query)
        parent_ids, parents = np.unique(query, return_inverse=True)
        name = (
            f"synthetic-search(users={self.users},queries={self.queries},urls={self.urls_per_query},"
            f"sq={self.query_exponent:g},su={self.url_exponent:g})"
        )
        return Population(
            counts,
            name=name,
            parents=parents.reshape(-1).astype(np.int64),
            # q<r>: the query of popularity rank r (0 = most popular)
            parent_labels=[f"q{q}" for q in parent_ids.tolist()],
            info={
                "synthetic": True,
                "records": True,
                "source": "synthetic search log: Zipf queries (labelled q<rank>), Zipf URLs within a query",
            },
        )


def _read_aol(drop_empty: bool) -> tuple[list[str], np.ndarray]:
    resource = importlib.resources.files("ldpbench_data").joinpath("aol_queries.tsv.gz")
    with resource.open("rb") as raw, gzip.open(raw) as fh:
        data = fh.read()
    labels: list[str] = []
    counts: list[int] = []
    for line in data.split(b"\n"):
        if not line:
            continue
        key, count = line.rsplit(b"\t", 1)
        # latin-1 maps each of the 6 bytes to one character: injective, and a cut-off UTF-8
        # sequence cannot make decoding fail.
        labels.append(key.decode("latin-1"))
        counts.append(int(count))
    if drop_empty:
        keep = [i for i, label in enumerate(labels) if label.strip() != "-"]
        labels = [labels[i] for i in keep]
        counts = [counts[i] for i in keep]
    return labels, np.asarray(counts, dtype=np.int64)


class AOLQueries(Dataset):
    """AOL-2006 queries cut to 6 bytes, one query per user (657,427 users, 120,978 queries).

    Queries only, no clicked URLs: a user's record is ``(query, *)``, the query's wildcard record
    ([A17] §4, Fig. 5-6: ``*`` stands for "a URL not in the head list", and a query without a URL
    has no other). The population is therefore a flat histogram of queries, **without**
    ``parents``: an item is a query, not a (query, URL) record under a query. A consumer of record
    structure reads that as "no URL level": Blender lists each query with the single URL slot
    ``<q, *>`` (``k_q = 1``, so its URL stage is vacuous and a query's record estimate is its query
    estimate), and ``ndcg``'s ``queries`` and ``list-of-lists`` structures reduce to the flat one.
    (Giving each query a ``parents`` entry of its own would instead declare one *real* URL per
    query, which Blender must then tell apart from ``<q, *>``: two URL slots per query and a
    needless URL-stage division of every client record estimate.)
    Research use only (AOL's terms); provenance in ``datasets/aol_queries.md``.
    """

    name = "aol-queries"
    params = (Param("drop_empty_query", bool, False, "drop AOL's empty-query marker '-' (18,720 users)"),)
    # 2: no parents (records are (query, *)); was: each query its own parent with one real URL.
    algorithm_version = "2"

    def load(self, rng: np.random.Generator) -> Population:
        labels, counts = _read_aol(self.drop_empty_query)
        return Population(
            counts,
            name="aol-queries",
            labels=labels,
            info={
                "source": "AOL-2006 search log, queries cut to 6 bytes (PEM preprocessing); datasets/aol_queries.md",
                "terms": "AOL: for non-commercial research use only; do not attempt re-identification",
                "records": True,
                "urls": "none: every record is (query, *)",
            },
        )


@hookimpl
def ldpbench_register_datasets(registry):
    registry.register(SearchLog)
    registry.register(SyntheticSearch)
    registry.register(AOLQueries)
