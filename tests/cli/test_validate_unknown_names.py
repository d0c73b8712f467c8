"""``ldpbench validate``: every unknown plugin name (dataset, oracle, post-processor, metric) is
reported at its ``FILE:LINE`` with a did-you-mean or, when nothing is close, the installed names
(issue 29 round 2, trial 2 shortfall 6: ``l2`` got neither)."""

from __future__ import annotations

from ldpbench.cli import main

SPEC = """\
name: typo
repeats: 3
datasets:
  - {dataset}: {{d: 16, n: 100}}
epsilons: [1]
oracles: [{oracle}]
pipelines: [base, {pipeline}]
metrics: [{metric}]
"""


def test_every_unknown_plugin_name_gets_a_suggestion_or_the_list(tmp_path, capsys):
    far = tmp_path / "far.yaml"
    far.write_text(SPEC.format(dataset="qqqq", oracle="xyzzy", pipeline="wwwww", metric="l2"))
    assert main(["validate", str(far)]) == 2
    err = capsys.readouterr().err
    lines = {int(line.split(":")[1]): line for line in err.splitlines() if line.startswith(str(far))}
    assert "unknown dataset 'qqqq' (installed: adult," in lines[4]
    assert "unknown oracle or protocol 'xyzzy' (installed: " in lines[6] and "grr" in lines[6]
    assert "unknown postprocessor 'wwwww' (installed: base," in lines[7]
    assert "unknown metric 'l2' — did you mean 'l1'?" in lines[8]
    near = tmp_path / "near.yaml"
    near.write_text(SPEC.format(dataset="zipff", oracle="gr", pipeline="norm_sub", metric="mes"))
    assert main(["validate", str(near)]) == 2
    err = capsys.readouterr().err
    for wrong, right in (("zipff", "zipf"), ("gr", "grr"), ("norm_sub", "norm-sub"), ("mes", "mse")):
        assert f"'{wrong}' — did you mean '{right}'?" in err, (wrong, err)
    assert "Traceback" not in err
