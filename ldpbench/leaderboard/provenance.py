"""What code produced each side of a comparison, read from the manifests beside the leaderboards.

A leaderboard's manifest records the identity of every plugin behind its rows
(:func:`ldpbench.loading.identity.spec_identities`: distribution, version, ``algorithm_version``
and a digest of the plugin's source), the commit and whether the work tree had uncommitted
changes (``dirty``). ``ldpbench compare`` and the pytest gate read both sides' manifests, where
they exist, and say what the numbers alone cannot (issue 29):

- **The baseline is the scaffold's example.** ``ldpbench new-plugin`` computes the first baseline
  with the example code it writes (k-RR for an oracle) under the new plugin's name and marks the
  manifest ``scaffold_example``. Once that plugin's code differs from the example's, the gate
  would compare the author's algorithm with the example's numbers (up to 87 times worse in the
  trial): a comparison that can never fail. It fails instead, with the command that refreshes
  the baseline (:func:`code_findings`, the *blockers*).
- **The code changed since the baseline** with the same ``algorithm_version``: the rows stay
  comparable (that is what a gate judges), and a note says which plugin changed.
- **The baseline was computed from a dirty work tree**: its commit did not produce it exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ldpbench.errors import LdpbenchError
from ldpbench.util.safeio import MAX_LEADERBOARD_BYTES, parse_json, read_text_bounded

#: The manifest key ``new-plugin`` sets on the baseline it computes with its example code:
#: ``{"distribution": ..., "plugin": ..., "note": ...}``.
SCAFFOLD_EXAMPLE = "scaffold_example"
MANIFEST_JSON = "manifest.json"
LEADERBOARD_JSON = "leaderboard.json"
#: The command that refreshes a plugin repository's baseline (the generated README's), run from a
#: tree whose code is committed: the baseline's manifest then says ``dirty: false`` (changes in
#: the baseline's own folder do not count, :func:`ldpbench.testing.gate.baseline_dirty`).
REFRESH_COMMAND = (
    "pytest tests/test_leaderboard.py --ldpbench-update-baseline && "
    "git add reports/baseline && git commit -m 'baseline: my plugin, not the example'"
)
#: The one order that gives a clean baseline manifest: code committed first, then the refresh.
REFRESH_ORDER = (
    "commit your code first (git add -A && git commit -m 'my plugin'), then refresh the baseline "
    f"from that committed tree and commit it: {REFRESH_COMMAND}"
)
#: Plugins a note names before it counts the rest.
_LISTED = 5


def manifest_path(leaderboard: str | Path) -> Path:
    """Where the manifest of a leaderboard lies: ``DIR/manifest.json`` for a results folder,
    ``manifest.json`` beside a ``leaderboard.json``, otherwise ``<stem>.manifest.json``."""
    path = Path(leaderboard)
    if path.is_dir():
        return path / MANIFEST_JSON
    return path.with_name(MANIFEST_JSON if path.name == LEADERBOARD_JSON else f"{path.stem}.{MANIFEST_JSON}")


def read_manifest(leaderboard: str | Path) -> dict[str, Any] | None:
    """The manifest of a leaderboard (:func:`manifest_path`), or None when there is none or it
    cannot be read (bounded, like every file a user names)."""
    path = manifest_path(leaderboard)
    if not path.is_file():
        return None
    try:
        data = parse_json(read_text_bounded(path, limit=MAX_LEADERBOARD_BYTES, what="manifest"), str(path), "manifest")
    except LdpbenchError:
        return None
    return data if isinstance(data, dict) else None


def identities(manifest: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """``plugin key -> identity`` from a run's manifest or a merged one (every run's, under ``runs``)."""
    found: dict[str, Mapping[str, Any]] = {}
    runs = manifest.get("runs")
    for one in [manifest, *(runs.values() if isinstance(runs, Mapping) else ())]:
        ids = one.get("identities") if isinstance(one, Mapping) else None
        if isinstance(ids, Mapping):
            found.update({str(k): v for k, v in ids.items() if isinstance(v, Mapping)})
    return found


def _changes(before: Mapping[str, Mapping[str, Any]], now: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """``key -> what changed`` (``version``, ``algorithm_version``, ``source``) for each plugin in both."""
    out = {}
    for key, new in now.items():
        old = before.get(key)
        if old is None:
            continue
        what = [
            f
            for f, field in (
                ("version", "version"),
                ("algorithm_version", "algorithm_version"),
                ("source", "source_hash"),
            )
            if old.get(field) != new.get(field)
        ]
        if what:
            out[key] = what
    return out


def _listing(keys: list[str]) -> str:
    shown = ", ".join(keys[:_LISTED])
    return shown + (f" and {len(keys) - _LISTED} more" if len(keys) > _LISTED else "")


def code_findings(
    baseline: Mapping[str, Any] | None, current: Mapping[str, Any] | None, *, baseline_name: str = "the baseline"
) -> tuple[list[str], list[str]]:
    """``(blockers, notes)`` about the code behind two leaderboards, from their manifests.

    A blocker fails the gate: the baseline is the scaffold's example and the plugin's code is no
    longer the example's. A note is printed beside the verdict: a plugin's code changed with the
    same ``algorithm_version``, or the baseline was computed from a dirty work tree. Nothing is
    said where a manifest is missing or records no identities (older manifests).
    """
    blockers: list[str] = []
    notes: list[str] = []
    if not isinstance(baseline, Mapping):
        return blockers, notes
    if baseline.get("dirty") is True:
        commit = str(baseline.get("commit") or "?")[:12]
        notes.append(
            f"{baseline_name} was computed from a work tree with uncommitted changes (dirty: true): "
            f"commit {commit} did not produce it exactly"
        )
    if not isinstance(current, Mapping):
        return blockers, notes
    before, now = identities(baseline), identities(current)
    changed = _changes(before, now)
    example = baseline.get(SCAFFOLD_EXAMPLE)
    if isinstance(example, Mapping):
        dist = example.get("distribution")
        # the code, not the version an install reports: the example's code under another version
        # string (an editable install, a rebuilt wheel) is still the example's
        mine = sorted(
            k for k, what in changed.items() if before[k].get("distribution") == dist and set(what) - {"version"}
        )
        if mine:
            blockers.append(
                f"{baseline_name} holds the numbers of the example code `ldpbench new-plugin` wrote "
                f"(its manifest says {SCAFFOLD_EXAMPLE}), and the code of {_listing(mine)} is no longer "
                f"the example's: the gate would compare your plugin with the example's numbers. To refresh "
                f"it, {REFRESH_ORDER}"
            )
            changed = {k: v for k, v in changed.items() if k not in mine}
    same_algorithm = sorted(k for k, what in changed.items() if "algorithm_version" not in what)
    if same_algorithm:
        notes.append(
            f"the code of {_listing(same_algorithm)} changed since {baseline_name} with the same "
            f"algorithm_version: their rows are compared with the old code's numbers (bump algorithm_version "
            f"for a deliberate change of algorithm; refresh the baseline once the new numbers are right)"
        )
    return blockers, notes
