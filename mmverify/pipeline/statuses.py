"""The status vocabulary of a scored artifact, shared by the report, the board
and batch output (one closed set, one meaning each)."""
from __future__ import annotations

from typing import Literal

Status = Literal["scored", "infeasible", "invalid", "error", "missing", "not_scored", "task_mismatch"]
# a board cell may also be "absent": the manifest has no row for it
BoardStatus = Literal[Status, "absent"]

# status -> its meaning, as the report prints it
STATUSES: dict[str, str] = {
    "scored": "scored against the panel",
    "infeasible": "a hard gate failed: O-EVAL 0",
    "invalid": "the artifact breaks its schema: O-EVAL 0",
    "error": "the artifact could not be read: O-EVAL 0",
    "missing": "no artifact: O-EVAL 0",
    "not_scored": "no panel paper votes on any metric the artifact could be scored on",
    "task_mismatch": "the artifact names another task than the one it was given for: O-EVAL 0",
}
# the statuses that count as a real zero and force the MULTI-BO term to -1
FORCED_FAIL: frozenset[str] = frozenset({"infeasible", "invalid", "error", "missing", "task_mismatch"})
ABSENT = "absent"
# on the board, a cell without a manifest row scores like a missing artifact
BOARD_FORCED: frozenset[str] = FORCED_FAIL | {ABSENT}
