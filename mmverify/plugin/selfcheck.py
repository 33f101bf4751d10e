"""Anchor-free self-check: what an agent may learn about its own artifact.

Design notes: docs/architecture.md, `mmverify/plugin/selfcheck.py`.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, replace
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from typing import Any, Iterable, Mapping

from mmverify.reading import paths
from mmverify.reading.labels import normalise_label
from mmverify.reading.artifact import ArtifactError

SELFCHECK_VERSION = "mmverify.selfcheck/1"
NOTE = ("computed from this artifact, the artifact schema and the task's gate specs only: "
        "no panel, oracle or metric-band value is read; replays are not run (gates reading "
        "replayed values show as gaps and are decided when the artifact is scored)")


def public_task(task):
    """A copy of ``task`` holding only what the statement makes public: the
    artifact schema and the gate specs. Panel, metrics, provenance and notes are
    dropped, so nothing computed from the copy can depend on them."""
    return replace(task, panel=(), metrics=(), provenance={}, notes=(), literature_split=None,
                   headline_reason=None)


def _load(task_id: Any, anchors_dir: str | None):
    from mmverify.tasks import TaskSpec, load_task

    return task_id if isinstance(task_id, TaskSpec) else load_task(task_id, anchors_dir)


def self_check(task_id: Any, artifact_or_path: Any, anchors_dir: str | None = None, *,
               strict_schema: bool = False) -> dict[str, Any]:
    """Schema and gate verdicts of an artifact, without any reference value.

    ``artifact_or_path``: a path, bytes, a dict, or a parsed :class:`Artifact`.
    ``task_id`` may be a loaded :class:`~mmverify.tasks.TaskSpec`. Raises
    :class:`~mmverify.tasks.TaskLoadError` only for an unknown task or broken
    anchors; a bad artifact is a result (``status`` ``missing``/``error``).

    Keys: ``schema_version``, ``task`` (id, suite, year, problem, title),
    ``artifact`` (source, sha256), ``status`` (``ok`` | ``invalid`` |
    ``infeasible`` | ``error`` | ``missing``; the first that applies, in the
    order the scoring pipeline checks them), ``would_score_zero``, ``error``,
    ``schema_errors``, ``gates`` (counts and every instance, or None when the
    artifact could not be read), ``hard_failures`` / ``gaps`` (instance names),
    ``missing_scored_fields`` (paths and units of scored fields the artifact
    lacks), ``unwitnessed_claims`` (scored fields given while a hard gate that
    reads them cannot be checked: they would score 0), ``note``. Schema
    violations are local unless ``strict_schema`` (or the task's setting) asks
    for all-or-nothing, exactly as in scoring (:mod:`mmverify.pipeline.violations`).
    """
    from mmverify.plugin.reward import coerce_artifact
    from mmverify.pipeline.validate import validate_artifact

    task = _load(task_id, anchors_dir)
    public = public_task(task)
    art = coerce_artifact(artifact_or_path)
    out: dict[str, Any] = {
        "schema_version": SELFCHECK_VERSION,
        "task": {"id": task.id, "suite": task.suite, "year": task.year, "problem": task.problem,
                 "title": task.title},
        "artifact": {"source": getattr(art, "source", None), "sha256": getattr(art, "sha256", None)},
        "status": None, "would_score_zero": True, "error": None, "schema_errors": [], "gates": None,
        "hard_failures": [], "gaps": [], "missing_scored_fields": [], "unwitnessed_claims": [], "note": NOTE,
    }
    if art is None or (isinstance(art, ArtifactError) and art.code == "missing_artifact"):
        out["status"] = "missing"
        out["error"] = art.as_dict() if art is not None else {"code": "missing_artifact",
                                                               "message": "no artifact was supplied"}
        if isinstance(artifact_or_path, str):
            out["artifact"]["source"] = artifact_or_path
        return out
    if isinstance(art, ArtifactError):
        out["status"] = "error"
        out["error"] = art.as_dict()
        if isinstance(artifact_or_path, str):
            out["artifact"]["source"] = artifact_or_path
        return out

    from mmverify.pipeline import violations
    from mmverify.gates import evaluate_gates

    # no replay: gates reading replayed values ($replay) are gaps here. A replay
    # can derive a reference answer from the statement alone (the dragon's
    # speed ratio), and a verdict on "claimed == replayed" would let an agent
    # bisect its way to it; replay verdicts are revealed by scoring only.
    gates = evaluate_gates(public, art.data, None)
    schema_errors = violations.annotate(task, validate_artifact(public.artifact_schema, art.data, limit=None),
                                        strict_schema=strict_schema)
    out["schema_errors"] = [e.as_dict() for e in schema_errors[:20]]
    out["gates"] = _without_author_text(gates)
    out["hard_failures"] = [i.name for i in gates.hard_failures]
    out["gaps"] = [i.name for i in gates.gaps]
    out.update(scoring_preview(task, violations.masked(art.data, schema_errors), gates))
    decided = violations.verdict(task, schema_errors, gates, strict_schema=strict_schema)
    if decided is not None:
        out["status"], out["error"] = decided
    else:
        out["status"] = "ok"
        out["would_score_zero"] = False
    return out


def scoring_preview(task, data: Any, gates) -> dict[str, list]:
    """What scoring would zero, told without any reference value: the scored
    fields the artifact lacks (or whose value breaks the schema: pass the
    masked data) and the claims a hard gate reading them cannot check."""
    from mmverify.scoring.rules import unwitnessed

    claims, seen = [], set()
    for m in task.metrics:
        rule = unwitnessed(m, gates)
        if rule is not None and m.path.text not in seen:
            seen.add(m.path.text)
            claims.append({"path": m.path.text, "detail": rule.detail})
    return {"missing_scored_fields": _missing_scored_fields(task, data), "unwitnessed_claims": claims}


WITHHELD = "reason withheld: anchor author's text"


def _without_author_text(gates) -> dict[str, Any]:
    """The gate report as a dict, with any free text written by the anchor's author
    (a gate's description or tolerance reason, which may quote reference values)
    replaced wherever an instance's detail embeds it."""
    out = gates.as_dict()
    texts = {}
    for g in gates.gates:
        texts[g.id] = [t for t in (g.tolerance_reason, g.description) if isinstance(t, str) and t.strip()]
    for inst in out["instances"]:
        for t in sorted(texts.get(inst["gate"], ()), key=len, reverse=True):
            if isinstance(inst.get("detail"), str) and t in inst["detail"]:
                inst["detail"] = inst["detail"].replace(t, WITHHELD)
    return out


def _missing_scored_fields(task, data: Any) -> list[dict[str, str]]:
    """Paths (and units) of fields the scoring reads that the artifact does not hold.
    Only the path and unit of a metric are used: never its direction, band or values."""
    seen, out = set(), []
    for m in task.metrics:
        if m.path.text in seen:
            continue
        seen.add(m.path.text)
        if m.is_list:
            found = paths.items(data, m.path)
            absent = isinstance(found, paths.Missing) or not found or any(isinstance(v, paths.Missing) for v in found)
        else:
            absent = isinstance(paths.get(data, m.path), paths.Missing)
        if absent:
            out.append({"path": m.path.text, "unit": m.unit})
    return out


# ------------------------------------------------------------------ leak scan

_NUMBER = re.compile(r"(?<![\w.\[])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w\]])(?!\.\d)")
_SKIP_SCHEMA_KEYS = {"description", "title", "$comment", "examples", "default", "x-note", "x-source"}
_SKIP_GATE_KEYS = {"description", "$comment", "tolerance_reason"}
# keys of a gate report whose numbers are counts or positions, not values
_STRUCTURAL_KEYS = {"counts", "index", "member"}


@dataclass(frozen=True)
class Leak:
    """An anchor value found in an output although nothing public explains it."""

    value: str          # the text found in the output
    secret: str         # the anchor value it matches
    where: str          # where the anchor value lives (panel paper/metric, oracle path)
    match: str          # "exact" | "rounded"

    def __str__(self) -> str:
        how = "" if self.match == "exact" else f" ({self.match})"
        return f"{self.value!r} matches anchor value {self.secret} from {self.where}{how}"


def _dec(text: str) -> Decimal | None:
    try:
        d = Decimal(text)
    except (InvalidOperation, ValueError):
        return None
    return d if d.is_finite() else None


def _leaves(obj: Any, skip: set[str] = frozenset(), where: str = "") -> Iterable[tuple[str, Any]]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in skip:
                continue
            yield from _leaves(v, skip, f"{where}.{k}" if where else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _leaves(v, skip, f"{where}[{i}]")
    else:
        yield where, obj


def _numbers_in(value: Any) -> list[tuple[str, Decimal]]:
    """Number tokens of a leaf: a JSON number itself, or numbers written inside a string."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, Decimal)):
        return [(str(value), Decimal(value))]
    if isinstance(value, float):
        return [(repr(value), Decimal(repr(value)))]
    if isinstance(value, Fraction):
        return [(str(value), Decimal(value.numerator) / Decimal(value.denominator))]
    if isinstance(value, str):
        out = []
        for m in _NUMBER.finditer(value):
            d = _dec(m.group(0))
            if d is not None:
                out.append((m.group(0), d))
        return out
    return []


def anchor_values(task) -> tuple[list[tuple[Fraction, str, str]], list[tuple[str, str]]]:
    """Every reference value of ``task``: ``(numbers, labels)``, each with where it lives.

    Numbers: panel values (scalars, list items, keyed items), panel context
    values, audited originals, and every number of the oracle artifact. Labels:
    non-numeric panel values and the oracle's strings at scored paths.
    """
    from mmverify.reading.artifact import parse_file
    from mmverify.reading.numbers import is_decimal_text

    numbers: list[tuple[Fraction, str, str]] = []
    labels: list[tuple[str, str]] = []

    def add(value: Any, where: str) -> None:
        for sub_where, leaf in _leaves(value, where=where):
            if isinstance(leaf, str) and is_decimal_text(leaf):
                numbers.append((Fraction(Decimal(leaf)), leaf, sub_where))
            elif isinstance(leaf, str):
                labels.append((leaf, sub_where))
            elif isinstance(leaf, (int, float, Decimal)) and not isinstance(leaf, bool):
                d = Decimal(repr(leaf)) if isinstance(leaf, float) else Decimal(leaf)
                numbers.append((Fraction(d), str(leaf), sub_where))

    for p in task.panel:
        add(dict(p.value_text), f"panel {p.paper_id} values")
        add(dict(p.context), f"panel {p.paper_id} context")
        for mid, rec in p.audit.items():
            if isinstance(rec, Mapping) and "original" in rec:
                add(rec["original"], f"panel {p.paper_id} audit {mid} original")
    try:
        oracle = parse_file(task.oracle_path).data
    except (ArtifactError, OSError):
        oracle = None
    if oracle is not None:
        for where, leaf in _leaves(oracle):
            if isinstance(leaf, Decimal):
                numbers.append((Fraction(leaf), str(leaf), f"oracle {where}"))
        for m in task.metrics:
            found = paths.items(oracle, m.path) if m.is_list else [paths.get(oracle, m.path)]
            if isinstance(found, paths.Missing):
                continue
            for v in found:
                if isinstance(v, str) and not is_decimal_text(v):
                    labels.append((v, f"oracle {m.path.text}"))
    return numbers, labels


def public_values(task, artifact_data: Any, also_public: Iterable[Any] = ()) -> tuple[set[Fraction], list[Decimal], set[str]]:
    """What an output may show without leaking: ``(numbers, numbers as decimals, labels)``.

    The checked artifact (every number and string, and numbers written in its
    strings); the values the task's replay derives from it; the gate specs minus their descriptions; compiled gate constants
    (bounds, identity sides as sympy normalises them, domains, declared
    totals); the artifact schema minus descriptions/examples/defaults; and the
    structural integers 0..N (counts, indices, list sizes)."""
    nums: set[Fraction] = set()
    labels: set[str] = set()

    def take(obj: Any, skip: set[str] = frozenset()) -> None:
        for _, leaf in _leaves(obj, skip):
            for _, d in _numbers_in(leaf):
                nums.add(Fraction(d))
            if isinstance(leaf, str):
                labels.add(normalise_label(leaf))

    take(artifact_data)
    take(list(also_public))
    try:  # values the task's replay derives from this artifact's own witness are the artifact's
        from mmverify.replay import run_replay

        replayed = run_replay(task, artifact_data)
    except Exception:  # a task without loadable replay data: nothing derived
        replayed = None
    if replayed is not None:
        nums.update(replayed.values.values())
    take(list(task.gates), _SKIP_GATE_KEYS)
    take(task.artifact_schema, _SKIP_SCHEMA_KEYS)
    try:
        from mmverify.gates import compile_gates

        compiled = compile_gates(public_task(task))
    except Exception:  # the scan must work on broken gate specs too (the raw specs are public)
        compiled = ()
    structural = len(compiled) + 2
    for g in compiled:
        for b in (g.lower, g.upper):
            if b is not None:
                nums.add(b.value)
        if g.total_value is not None:
            nums.add(g.total_value)
        if g.tolerance is not None:
            nums.add(g.tolerance)
        for v in g.domain_numbers:
            if v is not None:
                nums.add(v)
        for v in g.domain:
            labels.add(normalise_label(v))
        if g.identity is not None:
            for side in (g.identity.lhs, g.identity.rhs):
                take(str(side))
    structural = max(structural, _max_list_len(artifact_data) + 2)
    nums.update(Fraction(i) for i in range(structural + 1))
    decs = sorted({Decimal(f.numerator) / Decimal(f.denominator) for f in nums if _terminates(f)})
    return nums, decs, labels


def _terminates(f: Fraction) -> bool:
    d = f.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    return d == 1


def _max_list_len(obj: Any) -> int:
    if isinstance(obj, dict):
        return max((_max_list_len(v) for v in obj.values()), default=0)
    if isinstance(obj, list):
        return max([len(obj)] + [_max_list_len(v) for v in obj])
    return 0


def _rounds_to(value: Decimal, text: str, token: Decimal) -> bool:
    """``value`` rounded or truncated to the decimals of ``text`` gives ``token``."""
    digits = text.lstrip("-").replace(".", "").lstrip("0")
    if "e" in text.lower() or len(digits) < 4:
        return False
    places = len(text.split(".")[1]) if "." in text else 0
    q = Decimal(1).scaleb(-places)
    try:
        return any(value.quantize(q, rounding=r) == token for r in (ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_DOWN))
    except InvalidOperation:
        return False


def find_leaks(output: Any, task, artifact_data: Any, also_public: Iterable[Any] = ()) -> list[Leak]:
    """Anchor values of ``task`` that ``output`` (a dict/list or text) shows although
    neither ``artifact_data`` nor the public statement material explains them.

    A number token matches an anchor exactly, or (for tokens of at least four
    significant digits) as the anchor rounded or truncated to the token's
    decimals. A label matches as a whole word after trimming and case-folding
    (labels shorter than three characters are not scanned). ``also_public``:
    further values the caller supplied itself (e.g. the artifact's file path).
    """
    secrets, secret_labels = anchor_values(task)
    pub_nums, pub_decs, pub_labels = public_values(task, artifact_data, also_public)
    leaves = [output] if isinstance(output, str) else [leaf for _, leaf in _leaves(output, _STRUCTURAL_KEYS)]
    leaks: list[Leak] = []
    seen: set[tuple[str, str]] = set()
    secret_decs = [(Decimal(s.numerator) / Decimal(s.denominator), s, text, where)
                   for s, text, where in secrets if _terminates(s)]
    secret_set = {s for s, _, _ in secrets}
    for leaf in leaves:
        for text, tok in _numbers_in(leaf):
            f = Fraction(tok)
            if f in pub_nums or any(_rounds_to(p, text, tok) for p in pub_decs):
                continue
            if f in secret_set:
                for s, stext, where in secrets:
                    if s == f and (text, where) not in seen:
                        seen.add((text, where))
                        leaks.append(Leak(text, stext, where, "exact"))
                continue
            for sd, _s, stext, where in secret_decs:
                if _rounds_to(sd, text, tok) and (text, where) not in seen:
                    seen.add((text, where))
                    leaks.append(Leak(text, stext, where, "rounded"))
        if isinstance(leaf, str) and secret_labels:
            hay = normalise_label(leaf)
            for label, where in secret_labels:
                n = normalise_label(label)
                if len(n) < 3 or n in pub_labels or any(n in p for p in pub_labels if len(p) > len(n)):
                    continue
                if re.search(r"(?<!\w)" + re.escape(n) + r"(?!\w)", hay) and (n, where) not in seen:
                    seen.add((n, where))
                    leaks.append(Leak(label, label, where, "label"))
    return leaks


# ------------------------------------------------------- a distinct artifact

def distinct_artifact(data: Any, task=None) -> Any:
    """A copy of artifact ``data`` in which every number differs from the original,
    and differences, sums and ratios of numbers differ too: the k-th number (in
    document order) gets ``2k + 3`` added to its last digit (an integer ``n``
    becomes ``n + 2k + 3``; ``1.246266`` as the first number becomes
    ``1.246269``). When ``task`` is given, the strings at exact-value metric
    paths are replaced too. Used to scan a self-check for leaks: what the
    output shows of (or computes from) the artifact then differs from the anchors."""
    counter = [0]

    def bump() -> int:
        k = counter[0]
        counter[0] += 1
        return 2 * k + 3

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        if isinstance(node, Decimal) and node.is_finite():
            step = bump()
            if node == node.to_integral_value():
                return Decimal(int(node) + step)
            return node + Decimal(step).scaleb(node.as_tuple().exponent)
        if isinstance(node, int) and not isinstance(node, bool):
            return node + bump()
        if isinstance(node, float):
            d = Decimal(repr(node))
            step = bump()
            if d == d.to_integral_value():
                return float(d + step)
            return float(d + Decimal(step).scaleb(d.as_tuple().exponent))
        return node

    out = walk(copy.deepcopy(data))
    if task is not None:
        for k, m in enumerate(task.metrics):
            if m.direction != "exact_value":
                continue
            if m.is_list:
                head, _ = m.path.split()
                items = paths.get(out, head) if head.segments else out
                if isinstance(items, list):
                    for i in range(len(items)):
                        _replace_str(out, paths.parse_path(paths.concrete(m.path, i)), f"checked-label-{k}-{i}")
            else:
                _replace_str(out, m.path, f"checked-label-{k}")
    return out


def _replace_str(data: Any, path: paths.FieldPath, new: str) -> None:
    if not path.segments:
        return
    parent = paths.parent(data, path)
    last = path.segments[-1]
    if isinstance(last, str) and isinstance(parent, dict) and isinstance(parent.get(last), str):
        parent[last] = new
    elif isinstance(last, int) and isinstance(parent, list) and 0 <= last < len(parent) \
            and isinstance(parent[last], str):
        parent[last] = new
