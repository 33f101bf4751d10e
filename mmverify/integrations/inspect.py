"""inspect_ai: a scorer and a task factory over the bundled anchors.

Needs the ``inspect`` extra (``pip install 'mmverify[inspect]'``).

* :func:`mmverify_scorer` scores the model's last reply: the artifact is taken
  from the text (:mod:`mmverify.integrations.extract`) and run through the one
  pipeline, so the score value equals ``mmverify score``'s O-EVAL for that
  artifact. The score's metadata holds ``oeval`` (and ``oeval_exact``),
  ``status``, ``error``, the gate ``counts`` and every gate instance's verdict
  (``gates``), and how the artifact was found (``extraction``).
* :func:`mmverify_task` builds a :class:`inspect_ai.Task`: one sample per task
  id, the statement and artifact schema as the prompt
  (:func:`mmverify.integrations.prompt.chat_prompt`), ``generate()`` as the
  solver and :func:`mmverify_scorer` as the scorer. The task id is the sample
  id and ``metadata["task_id"]``.
"""
from __future__ import annotations

from typing import Any, Sequence

try:
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import Score, Target, mean, scorer, stderr
    from inspect_ai.solver import TaskState, generate
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("mmverify.integrations.inspect needs inspect_ai: "
                      "pip install 'mmverify[inspect]'") from exc

from mmverify.integrations.prompt import chat_prompt
from mmverify.integrations.rl import TASK_COLUMN, CompletionScore, score_completion


def score_metadata(s: CompletionScore) -> dict[str, Any]:
    """The score metadata: O-EVAL, status, error and gate verdicts."""
    report = s.report.as_dict()
    gates = report.get("gates") or {}
    return {
        "task_id": s.task_id,
        "oeval": report["oeval"],
        "oeval_exact": report["oeval_exact"],
        "closeness_oeval": report.get("closeness_oeval"),
        "status": report["status"],
        "error": report["error"],
        "gate_counts": gates.get("counts"),
        "gates": [{"gate": i["gate"], "index": i["index"], "severity": i["severity"], "form": i["form"],
                   "verdict": i["verdict"], "reason": i["reason"], "detail": i["detail"]}
                  for i in gates.get("instances", [])],
        "schema_errors": report["schema_errors"],
        "extraction": {"kind": s.extraction.kind, "reason": s.extraction.reason},
    }


@scorer(metrics=[mean(), stderr()])
def mmverify_scorer(anchors_dir: str | None = None):
    """O-EVAL of the artifact in the model's reply (0 when there is none, when
    it breaks the schema, or when a hard gate fails). The task id is the
    sample's ``metadata["task_id"]``, else its target text."""

    async def score(state: TaskState, target: Target) -> Score:
        task_id = (state.metadata or {}).get(TASK_COLUMN) or target.text
        s = score_completion(task_id, state.output.completion, anchors_dir)
        return Score(value=s.reward, answer=s.extraction.text,
                     explanation=s.reason or f"status {s.status}: O-EVAL {s.report.as_dict()['oeval']}",
                     metadata=score_metadata(s))

    return score


def _ids(task_ids: Sequence[str] | str | None) -> list[str] | None:
    """The task ids asked for: a list, or one string as ``inspect eval -T
    task_ids=ID`` passes it (several ids separated by commas)."""
    if task_ids is None:
        return None
    if isinstance(task_ids, str):
        return [t.strip() for t in task_ids.split(",") if t.strip()]
    return list(task_ids)


def samples(task_ids: Sequence[str] | str | None = None, anchors_dir: str | None = None) -> list[Sample]:
    """One sample per task (all bundled tasks when ``task_ids`` is None); one
    string is one id, or several separated by commas."""
    from mmverify.tasks import load_task, task_ids as all_ids

    asked = _ids(task_ids)
    ids = asked if asked is not None else all_ids(anchors_dir)
    out = []
    for tid in ids:
        t = load_task(tid, anchors_dir)
        out.append(Sample(id=t.id, input=chat_prompt(t), target=t.id,
                          metadata={TASK_COLUMN: t.id, "suite": t.suite, "year": t.year,
                                    "problem": t.problem, "headline": t.headline}))
    return out


@task
def mmverify_task(task_ids: Sequence[str] | str | None = None, anchors_dir: str | None = None) -> Task:
    """An inspect_ai Task over the anchors: statement + schema in, artifact out.
    ``task_ids`` is a list, or one string (``-T task_ids=ID`` or ``ID1,ID2``)."""
    return Task(dataset=MemoryDataset(samples(task_ids, anchors_dir), name="mmverify"),
                solver=generate(), scorer=mmverify_scorer(anchors_dir))
