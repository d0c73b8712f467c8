#!/usr/bin/env bash
# Regenerate the committed CI baseline from a fresh run of the CI leaderboard (docs/ci.md).
#
#   scripts/update_ci_baseline.sh [DEST]       (default DEST: reports/ci-baseline)
#
# Runs specs/ci.yaml, ci-em.yaml and ci-blender.yaml from scratch into a temporary folder, then
# copies the merged leaderboard.json, leaderboard.md and manifest.json (resolved specs, seeds,
# plugin names and versions, commit, machine) into DEST. Refuses to write a baseline in which a
# plugin failed (exit 3). Commit DEST together with the change that moved the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${1:-reports/ci-baseline}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
scripts/run_ci_leaderboard.sh "$work/ci"
mkdir -p "$dest"
cp "$work/ci/leaderboard.json" "$work/ci/leaderboard.md" "$work/ci/manifest.json" "$dest/"
echo "ldpbench: CI baseline written to $dest ($(grep -c '"dataset"' "$dest/leaderboard.json") rows)" >&2
