"""The files of a generated plugin repository, besides the plugin module (:mod:`.examples`)."""

from __future__ import annotations

from string import Template

from ldpbench.scaffold.examples import KindExample
from ldpbench.scaffold.source import is_local

PYPROJECT = Template("""[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "${distribution}"
version = "0.1.0"
description = "An ldpbench ${kind} plugin: ${name}"
requires-python = ">=3.10"
# Pinned: the committed baseline (reports/baseline/) was computed with this ldpbench; another
# release may simulate or score differently. ldpbench is on no package index: install it first
# from the source README.md names (the one this repository was generated with), then this package.
dependencies = ["ldpbench==${version}"]

[project.optional-dependencies]
test = ["pytest>=7"]

# How ldpbench finds the plugin: the module's hook registers ${name}.
[project.entry-points.ldpbench]
${name} = "${module}"

[tool.setuptools]
packages = ["${module}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
""")

CONFORMANCE_TEST = Template('''"""ldpbench's conformance kit on ${name}: one test per check, with readable ids."""

from ldpbench.testing import parametrize_with_checks

from ${module} import ${cls}


@parametrize_with_checks([${cls}])
def test_conformance(plugin, check):
    check()
''')

AUDIT_TEST = Template('''

def test_privacy_audit():
    """The exact audit of the output table and an empirical attack find no more than epsilon."""
    from ldpbench import build_plugins
    from ldpbench.audit import audit_plugin

    result = audit_plugin(build_plugins(), "${name}", {}, trials=5_000)
    assert result.audited, result.verdict
    assert not result.failed, result.verdict
''')

LEADERBOARD_TEST = Template('''"""The leaderboard gate: run specs/ci.yaml and compare with the committed baseline.

It fails when a row got worse beyond its threshold and its noise, fails in more repeats, or is
missing or not comparable. After a deliberate change, refresh the baseline and commit it:

    pytest tests/test_leaderboard.py --ldpbench-update-baseline
"""


def test_leaderboard(ldpbench_leaderboard):
    ldpbench_leaderboard("specs/ci.yaml", "reports/baseline/leaderboard.json")
''')

SPEC = Template("""# The CI leaderboard of ${name}: small enough for every push (about a second).
# Sensitivity: the gate flags a row only beyond its threshold (5%) and 5 standard errors of the
# difference; `ldpbench compare` prints each row's smallest detectable change. An MSE averages
# the squared errors of d items, so its noise falls as 1/sqrt(d * repeats): here (d = 1,024,
# 40 repeats) the MSE rows' 5-sigma band is about 5% of the mean and the 5% threshold decides.
# Measured with the example oracle (ldpbench's tests/statistical/test_new_plugin_gate.py): a +10%
# variance regression was flagged in 10 of 10 reseeded runs, 10 clean reseeded runs raised no
# alarm. At d = 32 and 20 repeats the band was 45-69% of the mean: +10% passed unseen in 10 of 10.
# After changing the spec, refresh the baseline: pytest tests/test_leaderboard.py --ldpbench-update-baseline
name: ${name}-ci
seed: 1
repeats: 40
simulation: aggregate
epsilons: [1, 4]
${spec_lines}""")

WORKFLOW = Template("""# The tests of ${distribution}: conformance kit, privacy audit (oracles) and the leaderboard gate.
name: tests

on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.11"
          cache: pip
${local_note}      - name: Install ldpbench (on no package index) from the source the baseline was made with
        run: pip install "${source}"
      - name: Install this plugin
        run: pip install -e '.[test]'
      - name: Tests (the leaderboard gate compares with reports/baseline/)
        run: pytest
""")

README = Template("""# ${distribution}

An ldpbench ${kind} plugin: `${name}` (module `${module}`).

## Install

ldpbench is on no package index. Install it from the source this repository was generated
with (the baseline was computed with that code), then this package:

```bash
python3 -m venv .venv && . .venv/bin/activate
pip install "${source}"
pip install -e '.[test]'
ldpbench plugins --kind ${kind}     # lists ${name} with this distribution
```
${local_readme}
## Test

```bash
pytest
```

runs the conformance kit on the plugin (`tests/test_conformance.py`)${audit_line} and the
leaderboard gate (`tests/test_leaderboard.py`): `specs/ci.yaml` is run and compared with the
committed baseline `reports/baseline/leaderboard.json`. The gate fails when a row got worse by
more than its threshold (5% by default) **and** more than 5 standard errors of the difference,
fails in more repeats, or is missing or not comparable.

**The committed baseline is the example's.** `reports/baseline/` was computed with the example
code `ldpbench new-plugin` wrote into `${module}/__init__.py`, under your plugin's name, and
its manifest says so (`scaffold_example`). After replacing the example with your own code, bump
`algorithm_version` if you like, then **commit your code first**, refresh the baseline from that
committed tree and commit it:

```bash
git add -A && git commit -m "my plugin"
pytest tests/test_leaderboard.py --ldpbench-update-baseline && git add reports/baseline && git commit -m "baseline: my plugin"
```

In this order the baseline's manifest records the commit that produced it with `dirty: false`
(changes inside `reports/baseline/` itself do not count); refreshed before the code is committed,
it says `dirty: true` and the update warns. Until you refresh it, the gate fails and says so,
rather than compare your plugin with the example's numbers.

`pytest --ldpbench-seed 7` runs the gate under another seed than the spec's: a clean change of
seed must pass (the numbers move only within their noise).

After a deliberate change of the numbers (or of `specs/ci.yaml`, e.g. more repeats), commit the
change, then refresh the baseline and commit it:

```bash
git add -A && git commit -m "<the change>"
pytest tests/test_leaderboard.py --ldpbench-update-baseline   # prints where it wrote
git add reports/baseline && git commit -m "baseline: <why the numbers moved>"
```

Upgrade ldpbench in a commit of its own: change the pin, run the gate, read what moved, refresh
the baseline. The GitHub Actions workflow (`.github/workflows/tests.yml`) installs ldpbench and
this package and runs `pytest` on every push and pull request.

The same checks without pytest, from the command line:

```bash
ldpbench check-plugin ${name}        # the conformance kit${check_plugin_audit}
${audit_command}ldpbench run specs/ci.yaml --out results/gate --no-progress
ldpbench compare reports/baseline/leaderboard.json results/gate/leaderboard.json   # the gate: exit 1 on a regression
```

(`results/` is in `.gitignore`, so the gate's run leaves the work tree clean.)

## ldpbench's documentation

In ldpbench's source tree (the `ldpbench` repository this package was generated from):

- `docs/plugins/tutorial.md`: writing a plugin, step by step, from this scaffold;
- `docs/plugins/reference.md`: the contract: hooks, base classes, every method and tag;
- `docs/plugins/testing.md`: the conformance kit, the privacy audit and this gate, and what to do
  when one fails;
- `docs/ci.md`: the leaderboard gate, `ldpbench compare`, baselines and their manifests;
- `docs/spec-format.md`: the spec format of `specs/ci.yaml`.

`ldpbench describe ${name}` shows a plugin's documentation and parameters; `ldpbench --help` and
`ldpbench COMMAND --help` list every command and option.
""")

GITIGNORE = """.venv/
__pycache__/
*.egg-info/
.pytest_cache/
results/
build/
dist/
"""


def render(example: KindExample, values: dict[str, str]) -> dict[str, str]:
    """Every file of the repository, by its path relative to the repository root."""
    spec_lines = example.spec_lines.substitute(values)
    conformance = CONFORMANCE_TEST.substitute(values)
    if example.audit:
        conformance += AUDIT_TEST.substitute(values)
    audit_line = " and its privacy audit" if example.audit else ""
    local = is_local(values["source"])
    local_note = (
        "      # A local path, recorded when this repository was generated: a CI runner cannot reach it.\n"
        "      # Replace it with a git URL at a commit, e.g. ldpbench @ git+https://github.com/OWNER/ldpbench@COMMIT\n"
        if local
        else ""
    )
    local_readme = (
        "\nThat line names a folder on the machine that generated this repository; elsewhere (and\n"
        "in `.github/workflows/tests.yml`) name the same code another way, e.g.\n"
        "`ldpbench @ git+https://github.com/OWNER/ldpbench@COMMIT`.\n"
        if local
        else ""
    )
    return {
        "pyproject.toml": PYPROJECT.substitute(values),
        "README.md": README.substitute(
            values,
            audit_line=audit_line,
            local_readme=local_readme,
            check_plugin_audit=" (and a quick privacy audit)" if example.audit else "",
            audit_command=(
                f"ldpbench audit {values['name']}               # the full privacy audit (docs/audit.md)\n"
                if example.audit
                else ""
            ),
        ),
        ".gitignore": GITIGNORE,
        f"{values['module']}/__init__.py": example.module.substitute(values),
        "tests/test_conformance.py": conformance,
        "tests/test_leaderboard.py": LEADERBOARD_TEST.substitute(values),
        "specs/ci.yaml": SPEC.substitute(values, spec_lines=spec_lines),
        ".github/workflows/tests.yml": WORKFLOW.substitute(values, local_note=local_note),
    }
