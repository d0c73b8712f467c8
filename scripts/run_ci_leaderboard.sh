#!/usr/bin/env bash
# Run the CI regression leaderboard (specs/ci.yaml, ci-em.yaml, ci-blender.yaml) into one folder.
#
#   scripts/run_ci_leaderboard.sh [OUT]        (default OUT: results/ci)
#
# Writes OUT/leaderboard.json (what `ldpbench compare` reads), OUT/leaderboard.md, OUT/manifest.json
# and each spec's results folder OUT/<spec name>/. A rerun into the same OUT resumes. Exit status as
# `ldpbench run`: 0 ok, 2 spec or usage error, 3 a plugin raised (its rows are marked). docs/ci.md.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-results/ci}"
python="${PYTHON:-python3}"
if [[ -z "${PYTHON:-}" && -x .venv/bin/python ]]; then
    python=.venv/bin/python
fi
exec "$python" -m ldpbench.testing.gate specs/ci.yaml specs/ci-em.yaml specs/ci-blender.yaml \
    --out "$out"
