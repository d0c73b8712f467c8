"""``ldpbench check-plugin`` says how a check passed, and prints every detail its table cut
(issue 29: details were cut at about 100 characters and shown whole only on failure; a check that
passed by its binomial fallback showed an empty detail)."""

from __future__ import annotations

import json

from ldpbench.cli import main

NO_TABLE = '''
import dataclasses

from ldpbench import hookimpl
from ldpbench_plugins.oracles.grr import GRR


class NoTableGRR(GRR):
    """k-RR declaring no output table: the kit can test only its support counts' binomial laws."""

    name = "no-table-grr"

    def tags(self):
        return dataclasses.replace(super().tags(), output_table=False, output_rows=False)


@hookimpl
def ldpbench_register_oracles(registry):
    registry.register(NoTableGRR)
'''


def _plugin_dir(tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "no_table_grr.py").write_text(NO_TABLE)
    return str(folder)


def test_a_check_passed_by_its_fallback_says_so(tmp_path, capsys):
    args = ["check-plugin", "no-table-grr", "--plugins-dir", _plugin_dir(tmp_path), "--no-audit", "--allow-partial"]
    main([*args, "--json"])
    checks = {c["check"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    follows = checks["check_perturb_follows_output_table"]
    assert follows["outcome"] == "passed"
    assert follows["detail"].startswith("by binomial tests of each item's support count (no output table at d = 3)")
    # the table cuts that note; the whole text follows the table
    main(args)
    out = capsys.readouterr().out
    table, _, below = out.partition("\n\ncheck_perturb_follows_output_table (passed):\n")
    assert "…" in table and below.startswith(follows["detail"])
