#!/usr/bin/env bash
# tests/test.sh: verifier of a Terminal-Bench / Harbor-style task graded by mmverify.
#
# Task folder (only tests/ is uploaded, at verification time, after the agent
# has finished, so the agent never sees the panel or the oracle):
#
#   instruction.md                       asks for /app/<task-id>_result.json
#   environment/Dockerfile               may `pip install mmverify` so the agent
#                                        can run `mmverify gate` on its own work
#   tests/test.sh                        this file
#   tests/anchors/index.json             {"schema_version": 1, "tasks": [{"id": ...}]}
#   tests/anchors/<task-id>/             task.json, artifact.schema.json, oracle.json
#   tests/mmverify-<version>-py3-none-any.whl   (optional) pinned engine
#
# Writes /logs/verifier/reward.json = {"reward": <O-EVAL>} and
# /logs/verifier/reward-details.json = the full report (gates, per-metric scores).
set -u

TASK_ID="${MMVERIFY_TASK_ID:-cumcm-2024-a-dragon-dance}"
ARTIFACT="${MMVERIFY_ARTIFACT:-/app/${TASK_ID}_result.json}"
REWARD_DIR="${MMVERIFY_REWARD_DIR:-/logs/verifier}"
ANCHORS="${MMVERIFY_ANCHORS_DIR:-/tests/anchors}"

mkdir -p "$REWARD_DIR"
# Never run Python from the agent's folder: `python3 -m` puts the working
# folder first on the import path, so a package left there (a "pip" of the
# agent's own) would run here.
cd "$(dirname "${BASH_SOURCE[0]}")" || exit 3

if ! command -v mmverify >/dev/null 2>&1; then
  wheel=$(ls /tests/mmverify-*.whl 2>/dev/null | head -n 1)
  if [ -n "$wheel" ]; then
    python3 -m pip install --quiet "$wheel"
  else
    python3 -m pip install --quiet mmverify
  fi
fi

mmverify verify --task "$TASK_ID" --artifact "$ARTIFACT" --reward-dir "$REWARD_DIR" --anchors "$ANCHORS"
status=$?

# The verifier writes reward.json itself in every case it can; this is the
# last resort when it could not even start (no Python, no mmverify).
if [ ! -s "$REWARD_DIR/reward.json" ]; then
  echo '{"reward": 0.0}' > "$REWARD_DIR/reward.json"
fi

# Exit codes: 0 scored; 1 the artifact failed (missing, unreadable, invalid,
# infeasible: reward 0 is the verdict); 2 usage error or reward folder not
# writable; 3 unknown
# task or broken anchors. 0 and 1 are grades; 2 and 3 are defects of the task
# set-up, passed on so that the harness reports a verifier error.
echo "mmverify verify: exit $status (see $REWARD_DIR/reward-details.json)"
if [ "$status" -le 1 ]; then
  exit 0
fi
exit "$status"
