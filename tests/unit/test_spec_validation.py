"""Spec loading and validation: every mistake gives FILE:LINE, a message and a did-you-mean."""

from __future__ import annotations

import textwrap

import pytest

from ldpbench.errors import SpecError
from ldpbench.spec import expand, load_spec
from ldpbench.spec.load import parse_document

GOOD = """\
name: demo
seed: 7
repeats: 3
datasets:
  - zipf: {d: 64, n: 5000, s: 1.1}
  - uniform: {d: 64, n: 5000, sample: 1000}
epsilons: [1, 2]
oracles: [grr, oue]
pipelines:
  - base
  - [base, base-pos]
  - norm-sub
metrics: [mse, {mse: {reduction: sum}}]
"""


def write(tmp_path, text, name="spec.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def problems(tmp_path, plugins, text):
    with pytest.raises(SpecError) as info:
        load_spec(write(tmp_path, text), plugins)
    return info.value.problems


def test_good_spec_resolves_labels_and_cells(tmp_path, plugins):
    spec = load_spec(write(tmp_path, GOOD), plugins)
    assert spec.name == "demo" and spec.seed == 7 and spec.repeats == 3
    assert [d.label for d in spec.datasets] == ["zipf(d=64,n=5000,s=1.1)", "uniform(d=64,n=5000)[sample=1000]"]
    assert [p.label for p in spec.pipelines] == ["base", "base+base-pos", "norm-sub"]
    assert [m.label for m in spec.metrics] == ["mse", "mse(reduction=sum)"]
    cells = list(expand(spec))
    assert len(cells) == 2 * 2 * 2 * 3
    assert len({c.cell_id for c in cells}) == len(cells)


def test_unknown_plugin_names_line_and_suggestion(tmp_path, plugins):
    text = GOOD.replace("  - norm-sub\n", "  - norm_sub\n")
    (msg,) = problems(tmp_path, plugins, text)
    assert msg.startswith(f"{tmp_path / 'spec.yaml'}:12: ")
    assert "unknown postprocessor 'norm_sub'" in msg and "did you mean 'norm-sub'?" in msg


def test_unknown_top_level_key(tmp_path, plugins):
    (msg,) = problems(tmp_path, plugins, GOOD + "epsilon: [1]\n")
    assert ":14: unknown key 'epsilon'" in msg and "did you mean 'epsilons'" in msg


def test_unknown_parameter_points_at_its_line(tmp_path, plugins):
    text = GOOD.replace("{d: 64, n: 5000, s: 1.1}", "\n      d: 64\n      exponent: 1.1")
    (msg,) = problems(tmp_path, plugins, text)
    assert ":7: unknown parameter 'exponent' for dataset 'zipf'" in msg


def test_wrong_type_and_range(tmp_path, plugins):
    text = GOOD.replace("n: 5000, s: 1.1", "n: many, s: 1.1").replace("repeats: 3", "repeats: 0")
    msgs = problems(tmp_path, plugins, text)
    assert any(":3: 'repeats' must be between 1" in m for m in msgs)
    assert any(":5: 'n' must be int" in m for m in msgs)


@pytest.mark.parametrize("entry, key, line", [
    ("zipf: {d: 10000000000}", "d", 5),  # at MAX_USERS: used to validate, then fail every cell
    ("zipf: {d: 100000001, n: 10}", "d", 5),
    ("uniform: {d: 123456789012}", "d", 5),
    ("synthetic-search: {queries: 1000000000}", "queries", 5),
    ("synthetic-search:\n      users: 10\n      urls_per_query: 100000001", "urls_per_query", 7),
])
def test_huge_synthetic_domains_are_refused_at_validation(tmp_path, plugins, entry, key, line):
    text = GOOD.replace("zipf: {d: 64, n: 5000, s: 1.1}", entry)
    (msg,) = problems(tmp_path, plugins, text)
    assert msg.startswith(f"{tmp_path / 'spec.yaml'}:{line}: ") and f"'{key}' must be <= 100000000" in msg, msg


def test_the_largest_synthetic_domain_still_validates(tmp_path, plugins):
    text = GOOD.replace("{d: 64, n: 5000, s: 1.1}", "{d: 100000000, n: 5000, s: 1.1}")
    spec = load_spec(write(tmp_path, text), plugins)  # only validated: loading it takes ~3 GB
    assert spec.datasets[0].label.startswith("zipf(d=100000000,")


def test_all_problems_are_reported_together(tmp_path, plugins):
    text = GOOD.replace("grr, oue", "grrr, oue").replace("mse, {", "msee, {")
    msgs = problems(tmp_path, plugins, text)
    assert len(msgs) == 2
    assert "did you mean 'grr'" in msgs[0] and "did you mean 'mse'" in msgs[1]


@pytest.mark.parametrize(
    "eps, fragment",
    [("[.nan]", "positive number"), ("[-1]", "positive number"), ("[]", "non-empty"), ("[1, 1]", "listed twice"), ("[abc]", "positive number")],
)
def test_bad_epsilons(tmp_path, plugins, eps, fragment):
    (msg,) = problems(tmp_path, plugins, GOOD.replace("[1, 2]", eps))
    assert ":7:" in msg and fragment in msg


def test_yaml_syntax_error_has_line(tmp_path, plugins):
    (msg,) = problems(tmp_path, plugins, GOOD.replace("oracles: [grr, oue]", "oracles: [grr, oue"))
    assert "invalid YAML" in msg and ":9:" in msg or ":10:" in msg


def test_duplicate_key(tmp_path, plugins):
    (msg,) = problems(tmp_path, plugins, GOOD + "seed: 8\n")
    assert ":14: duplicate key 'seed'" in msg


def test_python_tags_are_not_constructed(tmp_path, plugins):
    (msg,) = problems(tmp_path, plugins, GOOD.replace("seed: 7", "seed: !!python/object/apply:os.system ['true']"))
    assert ":2:" in msg


def test_alias_bomb_is_refused_quickly():
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(f"a{i}: &a{i} [*{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}, *{'a' if i == 1 else f'a{i-1}'}]")
    with pytest.raises(SpecError, match="too large"):
        parse_document("\n".join(lines))


def test_personalized_users_syntax(tmp_path, plugins):
    text = GOOD.replace("epsilons: [1, 2]", "users:\n  - {epsilon: 0.1, count: 50}\n  - {epsilon: inf, count: 5}")
    text = text.replace("  - uniform: {d: 64, n: 5000, sample: 1000}\n", "")
    spec = load_spec(write(tmp_path, text), plugins)
    (budget,) = spec.budgets
    assert budget.groups == ((0.1, 50), (float("inf"), 5))


def test_users_and_epsilons_are_exclusive(tmp_path, plugins):
    text = GOOD + "users: [{epsilon: 1, count: 5}]\n"
    msgs = problems(tmp_path, plugins, text)
    assert any("not both" in m for m in msgs)


def test_missing_required_keys(tmp_path, plugins):
    msgs = problems(tmp_path, plugins, "name: x\n")
    assert {m.split(": ", 1)[1] for m in msgs} >= {"missing key 'datasets'", "missing key 'oracles'"}


def test_dataset_path_resolves_relative_to_spec(tmp_path, plugins):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "h.csv").write_text("item,count\na,3\nb,1\n")
    text = GOOD.replace("  - uniform: {d: 64, n: 5000, sample: 1000}\n", "  - histogram: {path: h.csv}\n")
    spec = load_spec(write(tmp_path / "sub", text), plugins)
    assert spec.datasets[1].param_dict["path"] == str((tmp_path / "sub" / "h.csv").resolve())


def test_missing_requirement_is_a_spec_error(tmp_path, plugins):
    msgs = problems(tmp_path, plugins, GOOD + "requires: [ldpbench-no-such-plugin>=1]\n")
    assert any("ldpbench-no-such-plugin" in m and "not installed" in m for m in msgs)


@pytest.mark.parametrize(
    "old, new, line, hint",
    [
        # A tab in the indentation: PyYAML only says the character "cannot start any token".
        ("  - base\n", "\t- base\n", 10, "check the indentation: YAML indents with spaces, not tabs"),
        # One space too many before a key.
        ("repeats: 3\n", "  repeats: 3\n", 3,
         "check the indentation (spaces, not tabs), or quote a value that contains ': '"),
        # A list item less indented than its siblings.
        ("  - norm-sub\n", " - norm-sub\n", 12, "check the indentation (spaces, not tabs)"),
    ],
    ids=["tab", "key-indented", "item-outdented"],
)
def test_yaml_indentation_errors_carry_a_hint(tmp_path, plugins, old, new, line, hint):
    assert old in GOOD
    (msg,) = problems(tmp_path, plugins, GOOD.replace(old, new))
    assert msg.startswith(f"{tmp_path / 'spec.yaml'}:{line}: invalid YAML: ") and msg.endswith(hint), msg


def test_other_yaml_errors_get_no_indentation_hint(tmp_path, plugins):
    (msg,) = problems(tmp_path, plugins, GOOD.replace("oracles: [grr, oue]", "oracles: [grr, oue"))
    assert "indentation" not in msg
    (msg,) = problems(tmp_path, plugins, GOOD.replace("name: demo", "name: 'demo"))
    assert "indentation" not in msg


@pytest.mark.parametrize("key, value, names", [
    ("oracles", "[]", ["blender", "grr", "hr", "olh", "oue"]),  # oracles and protocols
    ("metrics", "", ["mse", "l1", "ndcg"]),  # a key with nothing after it
])
def test_an_empty_plugin_list_lists_the_available_names(tmp_path, plugins, key, value, names):
    text = "\n".join(f"{key}: {value}" if line.startswith(f"{key}:") else line for line in GOOD.splitlines())
    (msg,) = problems(tmp_path, plugins, text + "\n")
    assert f"'{key}' must be a non-empty list" in msg
    available = msg.split("; available: ", 1)[1].split(", ")
    assert set(names) <= set(available) and available == sorted(available)
    assert "zipf" not in available  # only the plugin kinds the key takes
