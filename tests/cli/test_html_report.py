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
