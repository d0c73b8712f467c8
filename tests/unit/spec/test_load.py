"""Reading a spec's YAML (ldpbench/spec/load.py): merge keys, and alias and merge-key bombs refused early."""

from __future__ import annotations

import pytest

from ldpbench.errors import SpecError
from ldpbench.spec.load import parse_document


def test_alias_bomb_is_refused_quickly():
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        lines.append(
            f"a{i}: &a{i} [*{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}, *{'a' if i == 1 else f'a{i - 1}'}]"
        )
    with pytest.raises(SpecError, match="too large"):
        parse_document("\n".join(lines))


def test_merge_keys_follow_yaml_written_keys_win(tmp_path, plugins):
    # A key written next to a merge key overrides the merged one (was: "duplicate key").
    doc = parse_document("base: &b {d: 8, n: 100}\nz: {<<: *b, n: 50}\nw: {<<: [{x: 1}, {x: 2}]}\n", "f")
    assert doc.data["z"] == {"d": 8, "n": 50} and doc.data["w"] == {"x": 1}
    with pytest.raises(SpecError, match="duplicate key 'n'"):
        parse_document("z: {n: 1, n: 2}\n", "f")


def test_merge_key_bomb_is_refused_before_it_is_built(tmp_path, plugins):
    # Reproduction: a 638-byte spec of nested merge keys took 13.8 s and 2.6 GB before exit 2.
    # Five levels here (a4 expands to 65,537 values) are refused at the fifth line
    # and cost the old code seconds; the subprocess test in tests/hardening measures a deeper one.
    import time

    levels = ["a0: &a0 {" + ", ".join(f"k{i}: {i}" for i in range(8)) + "}"]
    levels += [f"a{i}: &a{i} {{<<: [" + ", ".join([f"*a{i - 1}"] * 8) + "]}" for i in range(1, 5)]
    started = time.perf_counter()
    with pytest.raises(SpecError, match=r"f:5: the spec is too large once its aliases and merge keys"):
        parse_document("\n".join(levels) + "\n", "f")
    assert time.perf_counter() - started < 2.0
