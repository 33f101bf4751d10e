"""Gates: six decidable invariant forms, checked in exact arithmetic.

Public API
----------
``compile_gates(task) -> tuple[Gate, ...]``
    validate every gate spec of a task (TaskLoadError on a defect); cached.
``evaluate_gates(task, data) -> GateReport``
    every gate instance of parsed artifact ``data``; pure and exact.
``score_gates(task, data) -> GateReport``
    the same report, its records made on first read when every hard gate passes.
``audit_anchors(anchors_dir) -> AuditReport``
    the self-audit of the references (``mmverify audit``).

Forms: ``range``, ``integer`` (``binary``), ``order``, ``identity``,
``finite_domain``, ``partition_sum``. See :mod:`mmverify.gates.model` for the
dataclasses (the Lean emitter reads them), :mod:`mmverify.gates.formtable` for
what differs from form to form (one record per form), :mod:`mmverify.gates.forms` for
the verdict rules (wrong type -> fail, absent -> gap, else the exact predicate of
:mod:`mmverify.gates.predicates`) and :mod:`mmverify.gates.quick` for the reward's
all-pass check.
"""
from .compile import compile_gates
from .forms import evaluate_gate, evaluate_gates, score_gates
from .formtable import FORM_TABLE, FORMS, Form
from .model import LEVELS, RELATIONS, VERDICTS, Bound, Gate, GateInstance, GateReport, Identity

__all__ = [
    "FORM_TABLE", "FORMS", "Form", "LEVELS", "RELATIONS", "VERDICTS", "Bound", "Gate", "GateInstance", "GateReport", "Identity",
    "compile_gates", "evaluate_gate", "evaluate_gates", "score_gates", "audit_anchors",
]


def audit_anchors(*args, **kwargs):
    """See :func:`mmverify.gates.audit.audit_anchors` (imported lazily)."""
    from .audit import audit_anchors as run

    return run(*args, **kwargs)
