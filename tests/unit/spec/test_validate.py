"""Spec validation (ldpbench/spec/validate/): every mistake gives FILE:LINE, a message and a did-you-mean."""

from __future__ import annotations

import textwrap

import pytest

from ldpbench.errors import SpecError
from ldpbench.spec.expand import expand
from ldpbench.spec.validate import load_spec

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


@pytest.mark.parametrize(
    "entry, key, line",
    [
        ("zipf: {d: 10000000000}", "d", 5),  # at MAX_USERS: used to validate, then fail every cell
        ("zipf: {d: 100000001, n: 10}", "d", 5),
        ("uniform: {d: 123456789012}", "d", 5),
        ("synthetic-search: {queries: 1000000000}", "queries", 5),
        ("synthetic-search:\n      users: 10\n      urls_per_query: 100000001", "urls_per_query", 7),
    ],
)
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
    [
        ("[.nan]", "positive number"),
        ("[-1]", "positive number"),
        ("[]", "non-empty"),
        ("[1, 1]", "listed twice"),
        ("[abc]", "positive number"),
    ],
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
        (
            "repeats: 3\n",
            "  repeats: 3\n",
            3,
            "check the indentation (spaces, not tabs), or quote a value that contains ': '",
        ),
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


@pytest.mark.parametrize(
    "key, value, names",
    [
        ("oracles", "[]", ["blender", "grr", "hr", "olh", "oue"]),  # oracles and protocols
        ("metrics", "", ["mse", "l1", "ndcg"]),  # a key with nothing after it
    ],
)
def test_an_empty_plugin_list_lists_the_available_names(tmp_path, plugins, key, value, names):
    text = "\n".join(f"{key}: {value}" if line.startswith(f"{key}:") else line for line in GOOD.splitlines())
    (msg,) = problems(tmp_path, plugins, text + "\n")
    assert f"'{key}' must be a non-empty list" in msg
    available = msg.split("; available: ", 1)[1].split(", ")
    assert set(names) <= set(available) and available == sorted(available)
    assert "zipf" not in available  # only the plugin kinds the key takes


# ----------------------------------------------------------------------------------------------
# Holes of issue 10: each test below is built from a reproduction that passed (or crashed) before.
# ----------------------------------------------------------------------------------------------

MINIMAL = """\
name: demo
datasets:
  - zipf: {d: 64, n: 5000}
epsilons: [1]
oracles: [grr]
"""


def one_problem(tmp_path, plugins, text, line):
    (msg,) = problems(tmp_path, plugins, text)
    assert msg.startswith(f"{tmp_path / 'spec.yaml'}:{line}: "), msg
    return msg


def test_a_tag_that_does_not_fit_its_value_is_located_not_a_traceback(tmp_path, plugins):
    # Reproduction: "seed: !!bool maybe" raised KeyError from PyYAML (exit 4, a traceback).
    for bad in ("seed: !!bool maybe", "seed: !!int 0x", "seed: !!timestamp 2020-99-99", "seed: !!float abc"):
        msg = one_problem(tmp_path, plugins, MINIMAL + bad + "\n", 6)
        assert "cannot read" in msg or "seed" in msg


def test_brackets_in_a_block_scalar_or_string_are_not_nesting(tmp_path, plugins):
    # Reproduction: a description with 60 '[' was refused as "nested too deeply".
    text = MINIMAL + "description: |\n  " + "[" * 60 + "\n"
    assert load_spec(write(tmp_path, text), plugins).description == "[" * 60 + "\n"
    text = MINIMAL + "description: '" + "{" * 60 + "'\n"
    assert load_spec(write(tmp_path, text), plugins).description == "{" * 60
    msg = one_problem(tmp_path, plugins, MINIMAL + "x: " + "[" * 60 + "]" * 60 + "\n", 6)
    assert "nested too deeply" in msg


def test_name_must_be_one_short_path_component(tmp_path, plugins):
    # Reproductions: "abc\n" passed ($ matches before a trailing newline); a 256-character name
    # validated and then crashed run with ENAMETOOLONG.
    for bad in ('"abc\\n"', '"../up"', '"a/b"', '".."', '"a\\0b"', '"\\tx"', "a" * 101):
        msg = one_problem(tmp_path, plugins, MINIMAL.replace("name: demo", f"name: {bad}"), 1)
        assert "'name'" in msg
    assert load_spec(write(tmp_path, MINIMAL.replace("name: demo", "name: " + "a" * 100)), plugins).name == "a" * 100


@pytest.mark.parametrize(
    ("users", "what"),
    [
        ("[{epsilon: '1000', count: 10}]", "above the largest budget"),
        ("[{epsilon: 200*ln(d), count: 10}]", "above the largest budget"),
        ("[{epsilon: ln(1e400), count: 10}]", "not finite"),
        ("[{epsilon: 1e-300, count: 10}]", "below the smallest budget"),
        ("[{epsilon: 0.00001*ln(d), count: 10}]", "below the smallest budget"),
    ],
)
def test_personalized_budgets_obey_the_epsilon_bounds(tmp_path, plugins, users, what):
    # Reproduction: these passed validation, past the cap that 'epsilons: [1000]' meets.
    text = MINIMAL.replace("epsilons: [1]", f"users: {users}")
    msg = one_problem(tmp_path, plugins, text, 4)
    assert what in msg


def test_ln_d_with_a_one_item_domain_is_refused(tmp_path, plugins):
    # ln(d) at d = 1 is 0; d = 1 itself is now refused first, at the dataset's line.
    text = MINIMAL.replace("{d: 64, n: 5000}", "{d: 1, n: 5000}").replace(
        "epsilons: [1]", "users: [{epsilon: ln(d), count: 10}]"
    )
    msg = one_problem(tmp_path, plugins, text, 3)
    assert "'d'" in msg and "2" in msg, msg


def test_a_one_item_domain_is_refused_at_validate_as_audit_refuses_it(tmp_path, plugins, capsys):
    """d = 1 is valid everywhere or nowhere: a spec, ``audit --domain`` and ``check-plugin --domain``
    share MIN_DOMAIN (an oracle dividing by d - 1 failed every cell of such a spec)."""
    from ldpbench.cli import main
    from ldpbench.types.oracle import MIN_DOMAIN

    assert MIN_DOMAIN == 2
    msg = one_problem(tmp_path, plugins, MINIMAL.replace("{d: 64, n: 5000}", "{d: 1, n: 5000}"), 3)
    assert "'d'" in msg and "2" in msg, msg
    for command in ("audit", "check-plugin"):
        assert main([command, "grr", "--domain", "1"]) == 2
        assert "--domain must lie in [2, " in capsys.readouterr().err


def test_tiny_epsilons_are_refused(tmp_path, plugins):
    for eps in ("1.0e-300", "1e-300", "0.00001"):
        msg = one_problem(tmp_path, plugins, MINIMAL.replace("epsilons: [1]", f"epsilons: [{eps}]"), 4)
        assert "below the smallest budget, 0.0001" in msg


@pytest.mark.parametrize(
    ("change", "line", "what"),
    [
        (("{d: 64, n: 5000}", "{d: 64, n: 5000, sample: 5001}"), 3, "more users than dataset"),
        (("epsilons: [1]", "users: [{epsilon: 1, count: 6000}]"), 4, "more users than dataset"),
        (("epsilons: [1]", "users: [{epsilon: 1, count: 3000}, {epsilon: 2, count: 3000}]"), 4, "hold 6,000 users"),
        (("oracles: [grr]", "oracles: [{olh: {g: 1}}]"), 5, "'g' cannot be 1"),
        (("oracles: [grr]", "oracles: [{blender: {opt_in_fraction: 0}}]"), 5, "'opt_in_fraction' cannot be 0"),
        (
            ("oracles: [grr]", "oracles: [grr]\nmetrics: [{set-query: {queries: 10000000000}}]"),
            6,
            "'queries' must be <= 100000",
        ),
        (
            ("oracles: [grr]", "oracles: [grr]\npipelines: [{em: {max_iter: 10000000000, tol: 0}}]"),
            6,
            "'max_iter' must be <= 100000",
        ),
        (
            (
                "oracles: [grr]",
                "oracles: [grr]\npipelines: [{calibrate: {prior: power-law, prior_params: {alpah: 2}}}]",
            ),
            6,
            "unknown: alpah — did you mean 'alpha'?",
        ),
        (("{d: 64, n: 5000}", "{d: 64, n: 10000000000}"), 0, "simulation: per-user"),
    ],
)
def test_plugin_parameters_and_dataset_facts_are_checked_at_validate(tmp_path, plugins, change, line, what):
    # Reproductions: each validated and then failed every cell (or ran without end) at run time.
    text = MINIMAL.replace(*change)
    if "per-user" in what:
        text += "simulation: per-user\n"
        line = 6
    msg = one_problem(tmp_path, plugins, text, line)
    assert what in msg, msg


def test_prior_params_with_the_right_keys_validate(tmp_path, plugins):
    text = MINIMAL + "pipelines: [{calibrate: {prior: power-law, prior_params: {alpha: 2}}}]\n"
    assert load_spec(write(tmp_path, text), plugins).pipelines[0].label.startswith("calibrate(")


def test_a_dataset_file_that_is_a_fifo_or_a_device_is_refused_at_validate(tmp_path, plugins):
    # Reproduction: 'histogram: {path: /dev/zero}' or a FIFO validated (the path exists); the run
    # then read for ever or blocked.
    import os

    fifo = tmp_path / "counts.fifo"
    os.mkfifo(fifo)
    (tmp_path / "folder").mkdir()
    for path, kind in ((fifo, "FIFO"), ("/dev/zero", "device"), (tmp_path / "folder", "directory")):
        text = MINIMAL.replace("zipf: {d: 64, n: 5000}", f"histogram: {{path: {path}}}")
        msg = one_problem(tmp_path, plugins, text, 3)
        assert kind in msg and "not a regular file" in msg


def test_a_histogram_file_is_never_echoed(tmp_path, plugins):
    # Reproduction: 'histogram: {path: /etc/shadow}' printed a line of the file in the message.
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$s3cr3tHash:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n")
    text = MINIMAL.replace("zipf: {d: 64, n: 5000}", f"histogram: {{path: {secret}}}")
    msg = one_problem(tmp_path, plugins, text, 3)
    assert "line 2: not a count" in msg
    assert "s3cr3t" not in msg and "daemon" not in msg and "99999" not in msg


def test_an_unreadable_dataset_file_is_a_spec_problem(tmp_path, plugins):
    # Reproduction: a malformed data file validated and then failed every cell (exit 3).
    bad = tmp_path / "t.dat"
    bad.write_text("1 2 3\nnot numbers\n")
    text = MINIMAL.replace("zipf: {d: 64, n: 5000}", f"fimi: {{path: {bad}}}")
    msg = one_problem(tmp_path, plugins, text, 3)
    assert "cannot be loaded" in msg and "not a FIMI transaction file" in msg


def test_a_spec_that_is_a_device_a_fifo_or_a_directory_is_refused(tmp_path, plugins):
    import os

    fifo = tmp_path / "spec.fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo, tmp_path):
        with pytest.raises(SpecError, match=r":1: is (a device|a FIFO|a directory)"):
            load_spec(path, plugins)


def test_an_oracle_parameter_that_fails_at_a_datasets_size_is_refused_with_its_line(tmp_path, plugins):
    text = """\
        name: subset
        seed: 1
        datasets:
          - zipf: {d: 8, n: 1000}
          - zipf: {d: 64, n: 1000}
        epsilons: [1]
        oracles:
          - grr
          - ss:
              k: 10
        """
    found = problems(tmp_path, plugins, text)
    assert len(found) == 1 and found[0].startswith(
        f"{tmp_path / 'spec.yaml'}:10: oracle 'ss(k=10)' on dataset 'zipf(d=8,n=1000)' (d = 8)"
    )
    assert "k must be 0 (automatic) or in [1, d - 1] = [1, 7], got 10" in found[0]
    load_spec(write(tmp_path, text.replace("d: 8,", "d: 16,")), plugins)  # every size fits: valid


def tiny_spec(oracle: str, rest: str) -> str:
    """A one-cell spec: lines 1-8 up to ``pipelines:``, then ``rest`` (dedented) from line 9 on."""
    head = "name: t\nseed: 1\nrepeats: 1\ndatasets:\n  - zipf: {d: 8, n: 200, s: 1.2}\nepsilons: [1]\n"
    return head + f"oracles: [{oracle}]\npipelines:\n" + textwrap.dedent(rest)


def test_em_murakami_values_that_would_fail_or_never_end_are_refused_at_their_lines(tmp_path, plugins):
    # Reproduction: validate accepted an upside-down alpha grid (every cell then failed), 10**9
    # simulated data sets (a run that does not end) 10**400 (an alpha of inf) and an infinite ridge (NaN).
    spec = tiny_spec(
        "grr",
        """\
          - em-murakami
          - [base-pos, em-murakami: {alpha_min_exponent: 3, alpha_max_exponent: 1}]
          - em-murakami: {simulations: 1000000000}
          - em-murakami: {alpha_min_exponent: -2, alpha_max_exponent: 400}
          - em-murakami: {ridge: .inf}
        metrics: [mse]
        """,
    )
    path = tmp_path / "spec.yaml"
    found = sorted(problems(tmp_path, plugins, spec))
    assert found == [
        f"{path}:10: em-murakami: alpha_max_exponent (1) is below alpha_min_exponent (3): the alpha grid would be empty",
        f"{path}:11: 'simulations' must be <= 1000, got 1000000000",
        f"{path}:12: 'alpha_max_exponent' must be <= 100, got 400",
        f"{path}:13: 'ridge' must be <= 1000000000000.0, got inf",
    ]


def test_a_support_the_prior_is_not_defined_on_is_refused_at_its_line(tmp_path, plugins):
    # Reproduction: calibrate with the power-law prior and support_min: 0 validated, then failed
    # every cell with "a power-law prior needs a support starting at 1".
    spec = tiny_spec(
        "oue",
        """\
          - calibrate: {support_min: 1}
          - calibrate: {prior: power-law, support_min: 0}
          - calibrate: {prior: exponential, support_min: 0}
        metrics: [mse]
        """,
    )
    (msg,) = problems(tmp_path, plugins, spec)
    assert msg.startswith(f"{tmp_path / 'spec.yaml'}:10: support_min = 0 is below 1, where the 'power-law' prior"), msg


def test_a_loaded_dataset_of_one_item_is_refused_at_its_line(tmp_path, plugins):
    (tmp_path / "one.csv").write_text("count\n500\n")
    text = MINIMAL.replace("- zipf: {d: 64, n: 5000}", "- histogram: {path: one.csv}")
    msg = one_problem(tmp_path, plugins, text, 3)
    assert "has d = 1 item(s); every oracle needs a domain of at least 2 items" in msg


# --- result kinds and domains (docs/data-model.md) ---------------------------------------------

HEAVY = """\
name: heavy
repeats: 2
datasets:
  - zipf-bits: {bits: 64, n: 20000, support: 500}
epsilons: [2]
oracles:
  - pem: {k: 8}
pipelines: [base]
metrics: [topk-f1, ncr]
"""


def test_a_heavy_hitter_protocol_on_a_64_bit_domain_validates(tmp_path, plugins):
    spec = load_spec(write(tmp_path, HEAVY), plugins)
    assert [m.label for m in spec.mechanisms] == ["pem(k=8)"]


@pytest.mark.parametrize("method, line", [("olh", 7), ("fo-threshold", 7)])
def test_an_enumerating_method_on_a_64_bit_domain_is_refused_at_its_line(tmp_path, plugins, method, line):
    text = HEAVY.replace("  - pem: {k: 8}\n", f"  - {method}\n").replace("metrics: [topk-f1, ncr]", "metrics: [mse]")
    if method == "fo-threshold":
        text = text.replace("metrics: [mse]", "metrics: [topk-f1]")
    msg = one_problem(tmp_path, plugins, text, line)
    assert f"'{method}' enumerates its domain" in msg and "64-bit strings" in msg
    assert (
        "18,446,744,073,709,551,616 items" in msg
        and "use a method that lists only candidates: " in msg
        and "pem" in msg
    )


def test_an_enumerating_protocol_on_an_enumerable_domain_validates(tmp_path, plugins):
    text = HEAVY.replace("zipf-bits: {bits: 64, n: 20000, support: 500}", "zipf: {d: 256, n: 20000}")
    text = text.replace("  - pem: {k: 8}\n", "  - pem: {k: 8}\n  - fo-threshold: {k: 8}\n")
    assert len(load_spec(write(tmp_path, text), plugins).mechanisms) == 2


def test_a_metric_that_does_not_score_the_result_is_refused_with_the_nearest_that_does(tmp_path, plugins):
    msg = one_problem(tmp_path, plugins, HEAVY.replace("metrics: [topk-f1, ncr]", "metrics: [mse]"), 9)
    assert "metric 'mse' scores frequencies, but protocol 'pem' returns identified-items" in msg
    assert "did you mean 'identified-mse'?" in msg


def test_a_frequency_metric_and_a_heavy_hitter_metric_cannot_share_a_grid(tmp_path, plugins):
    text = HEAVY.replace("zipf-bits: {bits: 64, n: 20000, support: 500}", "zipf: {d: 256, n: 20000}")
    text = text.replace("  - pem: {k: 8}\n", "  - pem: {k: 8}\n  - grr\n").replace("topk-f1, ncr", "topk-f1")
    msg = one_problem(tmp_path, plugins, text, 10)
    assert "metric 'topk-f1' scores identified-items, but oracle 'grr' returns frequencies" in msg


def test_a_post_processor_that_does_not_take_identified_items_is_refused_at_its_step(tmp_path, plugins):
    msg = one_problem(tmp_path, plugins, HEAVY.replace("pipelines: [base]", "pipelines: [base, norm-sub]"), 8)
    assert "post-processor 'norm-sub' takes frequencies, but protocol 'pem' returns identified-items" in msg


def test_a_mechanism_that_does_not_take_the_users_record_shape_is_refused_at_its_line(tmp_path):
    import types

    import numpy as np

    from ldpbench import build_plugins, hookimpl
    from ldpbench.types import Dataset, Population

    class Baskets(Dataset):
        """Users who each hold a set of items (the shape padding-and-sampling will take)."""

        name = "toy-baskets"

        def load(self, rng):
            return Population.from_sets(np.array([0, 2, 3]), np.array([0, 1, 2]), 3, name="baskets")

    @hookimpl
    def ldpbench_register_datasets(registry):
        registry.register(Baskets)

    plugins = build_plugins(
        extra=[types.SimpleNamespace(__name__="toy_baskets", ldpbench_register_datasets=ldpbench_register_datasets)]
    )
    text = GOOD.replace(
        "  - zipf: {d: 64, n: 5000, s: 1.1}\n  - uniform: {d: 64, n: 5000, sample: 1000}\n", "  - toy-baskets\n"
    )
    found = problems(tmp_path, plugins, text)
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in found] == ["7", "7"]  # oracles: [grr, oue]
    assert (
        "oracle 'grr' takes records of shape item, but the users of dataset 'toy-baskets' each hold a set of items"
        in found[0]
    )


def test_an_item_only_oracle_on_a_set_valued_dataset_is_refused_at_its_line(tmp_path, plugins):
    text = """\
name: sets
seed: 7
repeats: 1
datasets:
  - zipf-sets: {n: 2000, d: 50}
epsilons: [2]
oracles:
  - padding-sampling: {ell: 3}
  - oue
pipelines: [base]
metrics: [mse]
"""
    (found,) = problems(tmp_path, plugins, text)
    assert found.split(": ", 1)[0].endswith("spec.yaml:9")
    assert (
        "oracle 'oue' takes records of shape item, but the users of dataset 'zipf-sets(n=2000,d=50)' each hold a set of items"
        in found
    )
