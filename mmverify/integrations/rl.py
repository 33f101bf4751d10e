"""Reward functions in the shapes RL trainers call, over the one scoring pipeline.

Design notes: docs/architecture.md, `mmverify/integrations/rl.py`.
"""
# No ``from __future__ import annotations`` here: verl's loader may run this
# file from its path as a module that is not in ``sys.modules``
# (``custom_reward_function.path=/…/rl.py``), and a dataclass with annotations
# kept as text cannot be made in such a module.
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from mmverify.integrations.extract import Extraction, extract_artifact

#: Dataset column holding each prompt's task id (TRL passes it through kwargs).
TASK_COLUMN = "task_id"
#: Default weight of the feasibility share in the shaped reward.
SHAPED_WEIGHT = 0.2


@dataclass(frozen=True)
class CompletionScore:
    """One completion's score: the headline ``reward``, the ``report`` of the
    pipeline (:class:`mmverify.pipeline.report.Report`) and the ``extraction``."""

    task_id: str
    reward: float
    report: Any
    extraction: Extraction

    @property
    def status(self) -> str:
        return self.report.status

    @property
    def reason(self) -> str | None:
        """Why the reward is 0 (None when the artifact was scored)."""
        err = self.report.error
        if err:
            return f"{err['code']}: {err['message']}"
        if self.report.status == "not_scored":
            return "not_scored: no panel paper votes on any metric the artifact reports"
        return None

    @property
    def gate_multiplier(self) -> int:
        """0 when a hard gate failed, else 1."""
        gates = self.report.gates
        return 0 if gates is not None and gates.hard_failures else 1

    @property
    def closeness(self) -> float:
        """The panel O-EVAL before the gate multiplier (0 when not computed)."""
        c = self.report.closeness
        return float(c) if c is not None else 0.0

    @property
    def feasibility(self) -> float:
        """Share of the hard-gate instances that pass; 0 when the artifact was
        not read, breaks the schema, or has no hard-gate instance."""
        gates = self.report.gates
        if gates is None or self.report.status in ("invalid", "error", "missing"):
            return 0.0
        hard = [i for i in gates.instances if i.hard]
        if not hard:
            return 0.0
        return sum(1 for i in hard if i.verdict == "pass") / len(hard)

    def shaped(self, weight: float = SHAPED_WEIGHT) -> float:
        """The shaped training reward (NOT the headline score): see the module."""
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"shaped weight must lie in [0, 1], got {weight}")
        return (1.0 - weight) * self.reward + weight * self.feasibility


def score_completion(task_id: Any, completion: Any, anchors_dir: str | None = None) -> CompletionScore:
    """Extract the artifact from ``completion`` (a string or chat messages) and
    score it on ``task_id`` (an id or a loaded :class:`mmverify.tasks.TaskSpec`).
    An unknown task raises :class:`mmverify.tasks.TaskLoadError`."""
    from mmverify.plugin.reward import score
    from mmverify.tasks import TaskSpec, load_task

    task = task_id if isinstance(task_id, TaskSpec) else load_task(task_id, anchors_dir)
    extraction = extract_artifact(completion)
    report = score(task, extraction.artifact)
    return CompletionScore(task.id, report.reward, report, extraction)


def score_completions(completions: Sequence[Any], task_ids: Sequence[str] | str,
                      anchors_dir: str | None = None) -> list[CompletionScore]:
    """:func:`score_completion` over a batch; ``task_ids`` is one id per
    completion or a single id for all. Each task is loaded once."""
    from mmverify.tasks import load_task

    ids = _task_ids(task_ids, len(completions))
    tasks: dict[str, Any] = {}
    out = []
    for completion, tid in zip(completions, ids):
        if tid not in tasks:
            tasks[tid] = load_task(tid, anchors_dir)
        out.append(score_completion(tasks[tid], completion))
    return out


def _task_ids(task_ids: Any, n: int) -> list[str]:
    if task_ids is None:
        raise ValueError(f"no task id: add a {TASK_COLUMN!r} column to the dataset "
                         f"(or pass {TASK_COLUMN}=...)")
    if isinstance(task_ids, str):
        return [task_ids] * n
    ids = list(task_ids)
    if len(ids) != n:
        raise ValueError(f"{len(ids)} task ids for {n} completions")
    for tid in ids:
        if not isinstance(tid, str):
            raise TypeError(f"a task id is a string, not {type(tid).__name__}")
    return ids


def make_trl_reward(*, column: str = TASK_COLUMN, shaped: bool = False, weight: float = SHAPED_WEIGHT,
                    anchors_dir: str | None = None) -> Callable[..., list[float]]:
    """A TRL ``reward_funcs`` entry: ``f(completions, **kwargs) -> list[float]``.

    ``column`` names the dataset column with the task id. ``shaped=True`` gives
    the shaped training reward (not the headline score). The function's
    ``__name__`` (TRL logs rewards under it) is ``mmverify_reward`` or
    ``mmverify_shaped_reward``.
    """

    def reward_func(completions: Sequence[Any], **kwargs: Any) -> list[float]:
        scores = score_completions(completions, kwargs.get(column), anchors_dir)
        return [s.shaped(weight) if shaped else s.reward for s in scores]

    reward_func.__name__ = reward_func.__qualname__ = "mmverify_shaped_reward" if shaped else "mmverify_reward"
    return reward_func


#: The headline reward for TRL, reading the ``task_id`` column.
trl_reward_func = make_trl_reward()
#: The shaped training reward for TRL (NOT the headline score).
trl_shaped_reward_func = make_trl_reward(shaped=True)


def _verl_task_id(ground_truth: Any, extra_info: Mapping[str, Any] | None) -> str:
    if isinstance(ground_truth, str) and ground_truth:
        return ground_truth
    if isinstance(ground_truth, Mapping) and isinstance(ground_truth.get(TASK_COLUMN), str):
        return ground_truth[TASK_COLUMN]
    if isinstance(extra_info, Mapping) and isinstance(extra_info.get(TASK_COLUMN), str):
        return extra_info[TASK_COLUMN]
    raise ValueError("no task id: set the row's reward_model.ground_truth to the task id "
                     f"(or extra_info[{TASK_COLUMN!r}])")


def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                  extra_info: Mapping[str, Any] | None = None) -> float:
    """verl's custom reward function: the headline reward of ``solution_str``.

    The task id is ``ground_truth`` (a string, or a mapping with ``task_id``),
    else ``extra_info["task_id"]``. ``data_source`` is not read (any name may be
    used). An anchors folder other than the bundled one is taken from
    ``extra_info["anchors_dir"]`` or ``$MMVERIFY_ANCHORS``.
    """
    anchors_dir = extra_info.get("anchors_dir") if isinstance(extra_info, Mapping) else None
    return score_completion(_verl_task_id(ground_truth, extra_info), solution_str, anchors_dir).reward


def compute_score_shaped(data_source: Any, solution_str: str, ground_truth: Any,
                         extra_info: Mapping[str, Any] | None = None) -> float:
    """verl form of the shaped training reward (NOT the headline score); the
    weight is ``extra_info["shaped_weight"]`` (default :data:`SHAPED_WEIGHT`)."""
    info = extra_info if isinstance(extra_info, Mapping) else {}
    s = score_completion(_verl_task_id(ground_truth, extra_info), solution_str, info.get("anchors_dir"))
    return s.shaped(float(info.get("shaped_weight", SHAPED_WEIGHT)))
