"""A spec's numbers do not depend on where it sits; its data files are checked before a run; the
progress bar goes to stderr and never into machine-readable stdout."""

from __future__ import annotations

import json
import textwrap

SPEC = """\
name: portable
seed: 3
repeats: 4
datasets:
  - histogram: {path: data/counts.csv}
epsilons: [1]
oracles: [grr, oue]
pipelines: [base]
metrics: [mse]
"""

COUNTS = "item,count\n" + "".join(f"i{v},{c}\n" for v, c in enumerate([400, 250, 120, 60, 30, 20, 10, 5]))


def _project(root):
    (root / "data").mkdir(parents=True)
    (root / "data" / "counts.csv").write_text(COUNTS)
    (root / "spec.yaml").write_text(textwrap.dedent(SPEC))
    return root


def test_same_spec_in_two_folders_gives_the_same_rows(tmp_path, run_cli):
    # The path stays as written in labels and seeds; only the plugin sees it resolved.
    runs = []
    for where in ("checkout-a", "elsewhere/checkout-b"):
        root = _project(tmp_path / where)
        done = run_cli("run", "spec.yaml", "--format", "json", "--out", "out", "--workers", "1", cwd=root)
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    assert runs[0] == runs[1]
    assert {r["dataset"] for r in runs[0]} == {"histogram(path=data/counts.csv)"}


def test_a_missing_data_file_is_a_located_spec_error(tmp_path, run_cli):
    root = _project(tmp_path / "p")
    (root / "data" / "counts.csv").unlink()
    for command in (("validate", "spec.yaml"), ("run", "spec.yaml", "--out", "out")):
        done = run_cli(*command, cwd=root)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "spec.yaml:5: " in done.stderr and "no such file: data/counts.csv" in done.stderr
        assert "Traceback" not in done.stderr
    assert not (root / "out").exists()  # nothing ran


def test_progress_bar_goes_to_stderr_and_stdout_stays_json(tmp_path, run_cli):
    root = _project(tmp_path / "p")
    done = run_cli("run", "spec.yaml", "--format", "json", "--out", "out", "--workers", "1", "--progress", cwd=root)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)  # nothing but the JSON list
    assert len(rows) == 2
    # tqdm's bar over the 8 cells (2 oracles x 4 repeats), labelled with the spec's name
    assert "portable:" in done.stderr and "/8 [" in done.stderr and "cell/s" in done.stderr
    quiet = run_cli(
        "run", "spec.yaml", "--format", "json", "--out", "out2", "--workers", "1", "--no-progress", cwd=root
    )
    assert quiet.returncode == 0 and "cell/s" not in quiet.stderr
