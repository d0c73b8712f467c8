"""``ldpbench report DIR --html``: one self-contained page (no browser here: structure only)."""

from __future__ import annotations


def test_failures_table_gives_each_reason_and_where_it_was_raised():
    import polars as pl

    from ldpbench.report.html import failures_table

    lb = pl.DataFrame(
        {
            "dataset": ["zipf", "zipf"],
            "users": ["", ""],
            "epsilon": [1.0, 4.0],
            "oracle": ["grr", "grr"],
            "pipeline": ["bad", "base"],
            "metric": ["mse", "mse"],
            "failed": [3, 0],
            "error": ["pipeline 'bad': ValueError: <no>", None],
        }
    )
    where = {("zipf", "", "grr", "bad", "mse", "pipeline 'bad': ValueError: <no>"): "plugs/bad.py:7 in apply"}
    table = failures_table(lb, where)
    assert table.count("<tr>") == 2  # header + the one failed row
    assert "pipeline &#x27;bad&#x27;: ValueError: &lt;no&gt;" in table  # escaped
    assert '<td class="t">plugs/bad.py:7 in apply</td>' in table and "<th>where</th>" in table


def test_too_few_repeats_are_said_on_the_page():
    from support import result_series

    from ldpbench.leaderboard.aggregate import aggregate
    from ldpbench.report.html import _undecided

    lb = aggregate(result_series([1.0, 1.2, 0.9], oracle="grr") + result_series([5.0, 6.0, 4.5], oracle="oue"))
    assert _undecided(lb, {"spec": {"alpha": 0.01}}) == [
        "<p>3 repeats cannot show a difference at alpha 0.01; at least 8 are needed (no tie verdict for 1 row: zipf ε=1 oue · base mse).</p>"
    ]
    enough = aggregate(result_series([1.0, 1.2, 0.9, 1.1, 1.0, 0.8], oracle="grr"))
    assert _undecided(enough, None) == []
