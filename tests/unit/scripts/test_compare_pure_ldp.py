"""The peer-free parts of scripts/compare_pure_ldp.py: ldpbench's side of both tables runs at tiny
n without pure-LDP or multi-freq-ldpy, a missing peer is an exit 2 with the install line (which
scripts/docs_figures.py reads as "leave the table as it is"), the table's arithmetic, the NumPy 2
shim given to pure-LDP, and that ldpbench itself never imports a peer."""

from __future__ import annotations

import importlib.util
import math
import re
import sys

import numpy as np
from support import ROOT

SCRIPT = ROOT / "scripts" / "compare_pure_ldp.py"
_spec = importlib.util.spec_from_file_location("compare_pure_ldp", SCRIPT)
cmp = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = cmp  # its dataclasses look their module up
_spec.loader.exec_module(cmp)

PEER_MODULES = ("pure_ldp", "multi_freq_ldpy")


def _rows(text: str) -> dict[str, list[str]]:
    """Markdown table rows by their first cell's oracle / protocol name."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    return rows


def _number(cell: str) -> float:
    return float(cell.replace(",", "")) if re.fullmatch(r"[\d,]+", cell) else math.nan


def test_ours_only_oracles_at_tiny_n(capsys):
    argv = ["--ours-only", "--n", "30", "--big-n", "60", "--d", "16", "--rounds", "1", "--markdown"]
    assert cmp.main([*argv, "--only", "grr", "oue", "pgr"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert set(rows) == {"grr", "oue", "pgr"}
    for cells in rows.values():
        # ldpbench's two throughputs are positive figures; the peers' are not run
        assert _number(cells[1]) > 0 and _number(cells[2]) > 0
        assert cells[3] == cells[4] == "—" and "peers not run" in cells[-1]
    assert not any(name in sys.modules for name in PEER_MODULES)


def test_ours_only_heavy_hitters_at_tiny_n(capsys):
    argv = ["--heavy-hitters", "--ours-only", "--n", "40", "--big-n", "80", "--bits", "12", "--support", "20"]
    assert cmp.main([*argv, "--rounds", "1", "--markdown"]) == 0
    rows = _rows(capsys.readouterr().out)
    assert set(rows) == set(cmp.HEAVY_HITTERS)
    for name in ("pem", "treehist"):
        assert _number(rows[name][1]) > 0 and _number(rows[name][2]) > 0
    from ldpbench import build_plugins

    if "sfp" not in build_plugins().registry("protocol").names():
        assert "not in ldpbench yet" in rows["sfp"][-1] and rows["sfp"][1] == "—"
    assert not any(name in sys.modules for name in PEER_MODULES)


def test_ours_only_longitudinal_at_tiny_n(capsys):
    argv = ["--longitudinal", "--ours-only", "--n", "30", "--big-n", "60", "--d", "8", "--T", "3", "--rounds", "1"]
    assert cmp.main([*argv, "--markdown", "--only", "l-grr", "l-osue"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out)
    assert set(rows) == {"l-grr", "l-osue"} and "T = 3 rounds" in out
    for cells in rows.values():
        assert _number(cells[1]) > 0 and _number(cells[2]) > 0 and "aggregate path n=60" in cells[-1]
    assert not any(name in sys.modules for name in PEER_MODULES)


def test_ours_only_multidimensional_at_tiny_n_with_the_agreement_table(capsys):
    argv = ["--multidimensional", "--ours-only", "--n", "200", "--big-n", "400", "--attributes", "2", "--d", "4"]
    assert cmp.main([*argv, "--rounds", "1", "--markdown", "--agreement", "4"]) == 0
    out = capsys.readouterr().out
    rows = _rows(out.split("Agreement")[0])
    assert set(rows) == {f"{name}[{params['oracle']}]" for name, params, _ in cmp.MULTIDIM}
    for cells in rows.values():
        assert _number(cells[1]) > 0 and _number(cells[2]) > 0 and "aggregate path" in cells[-1]
    agreement = _rows(out.split("Agreement")[1])
    assert set(agreement) == set(rows) and all(len(cells) == 3 for cells in agreement.values())
    assert not any(name in sys.modules for name in PEER_MODULES)


def test_a_missing_peer_exits_2_with_the_install_line(capsys, monkeypatch):
    for name in PEER_MODULES:
        monkeypatch.setitem(sys.modules, name, None)  # import raises ImportError
    for mode in ([], ["--heavy-hitters"]):
        assert cmp.main([*mode, "--n", "10"]) == 2
        err = capsys.readouterr().err
        assert "not installed" in err and "pip install pure-ldp multi-freq-ldpy" in err and "--ours-only" in err


def test_ldpbench_never_imports_a_peer():
    sources = [*(ROOT / "ldpbench").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]
    pattern = re.compile(r"^\s*(import|from)\s+(pure_ldp|multi_freq_ldpy)\b", re.M)
    assert sources and not [str(p) for p in sources if pattern.search(p.read_text(encoding="utf-8"))]


def test_the_ratio_is_ours_over_the_fastest_peer_at_the_same_n():
    row = cmp.Row("olh", small=20_000.0, big=250_000.0)
    row.peers = {"pure-LDP": ("LH", 100.0), "multi-freq-ldpy": ("LH(optimal=True)", 400.0)}
    assert row.fastest() == ("multi-freq-ldpy", 400.0)
    table = cmp.render([row], 2_000, 200_000, True)
    cells = _rows(table)["olh"]
    assert cells[1:3] == ["20,000", "250,000"]
    assert cells[5:7] == ["multi-freq-ldpy", "50×"]  # 20,000 / 400, not 20,000 / 100
    # a peer that failed is shown, never used for the ratio; below 10x two significant digits
    row.peers["multi-freq-ldpy"] = cmp.peer_failure("multi-freq-ldpy", TypeError("boom"))
    assert row.fastest() == ("pure-LDP", 100.0)
    assert "raised TypeError: boom" in cmp.render([row], 2_000, 200_000, True)
    assert cmp.ratio(150.0, 100.0) == "1.5×" and cmp.ratio(math.nan, 1.0) == "—"


def test_the_numpy2_shim_reads_zeros_none_as_numpy_1_did():
    shim = cmp._ZerosNoneAsScalar(np)
    assert shim.zeros(None).shape == () and shim.zeros(None) == 0
    assert shim.zeros(3).shape == (3,) and shim.zeros((2, 2), dtype=int).dtype == int
    assert shim.arange is np.arange  # everything else is NumPy's own
    # Why the shim exists: recent NumPy releases refuse a None shape (the peers pass one). The
    # oldest NumPy pyproject allows (2.0.1) still accepts it, and gives what the shim gives.
    try:
        plain = np.zeros(None)
    except TypeError:
        return
    assert plain.shape == () and plain == 0
