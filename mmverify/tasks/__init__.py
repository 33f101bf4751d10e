"""Tasks: what a task is (:mod:`.spec`), loading and checking one from
``anchors/`` (:mod:`.load`), the on-disk cache of what a load proved
(:mod:`.cache`) and drafts for a task's author (:mod:`.scaffold`).

The names below are the ones callers import from ``mmverify.tasks``.
"""
from .load import (ANCHORS_HINT, build_task, default_anchors_dir, load_all, load_index, load_task, read_trusted_json,
                   schema_at, task_ids, task_json_schema)
from .spec import (DIRECTIONAL, EXCLUSION_REASONS, Band, MetricSpec, Paper, PanelValue, TaskLoadError, TaskSpec)

__all__ = [
    "ANCHORS_HINT", "DIRECTIONAL", "EXCLUSION_REASONS", "Band", "MetricSpec", "Paper", "PanelValue", "TaskLoadError",
    "TaskSpec", "build_task", "default_anchors_dir", "load_all", "load_index", "load_task", "read_trusted_json",
    "schema_at", "task_ids", "task_json_schema",
]
