"""The data of the gate layer: compiled gate specs, gate instances (one verdict
each) and the gate report of one artifact. Not split (about 550 lines): one
vocabulary, read together by the forms, the report and the Lean emitter.

Design notes: docs/architecture.md, `gates/model.py`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable, Literal, NamedTuple, Sequence, get_args

from mmverify.reading.paths import FieldPath, concrete

if TYPE_CHECKING:
    from .registry import FormName

# the closed sets of the gate layer (levels, severities and forms are also
# enums of the task schema; a test keeps the two equal)
Verdict = Literal["pass", "fail", "gap"]
Level = Literal["A", "B", "C"]
# a failed hard gate zeroes the task; a failed claim gate zeroes the claims it
# ``verifies`` (refuted by the replay), not the task; soft gates never change a score
Severity = Literal["hard", "claim", "soft"]
SCORED_SEVERITIES = frozenset({"hard", "claim"})
Relation = Literal["==", "<=", ">=", "<", ">"]

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
LEVELS: dict[Level, str] = {"A": "units/ranges", "B": "internal consistency", "C": "external physical truth"}
RELATIONS: tuple[Relation, ...] = get_args(Relation)


@dataclass(frozen=True)
class Bound:
    """One side of a range: ``value`` (exact), its anchor ``text``, and whether it is strict."""

    value: Fraction
    text: str
    strict: bool = False


@dataclass(frozen=True)
class Identity:
    """A compiled identity relation ``lhs <relation> rhs``.

    ``evaluate(values)`` gives both sides' exact values at the variables'
    values (Fractions in ``var_names`` order) as integer pairs, each None where
    it divides by zero: a closure compiled from the checked ``ast`` of
    ``expr``, no sympy (see :func:`mmverify.gates.identity.compile_identity`).
    ``var_paths`` is aligned with ``var_names`` (declaration order of ``vars``).
    ``holds(values, tol)`` decides the relation on the parsed Decimals of the
    verdict path without Fractions where that is exact (None otherwise).

    ``lhs``/``rhs`` are the sides as sympy expressions over the Symbols named
    in ``var_names`` (exact Rational constants only; +, -, *, / and integer
    powers), built on first use: only the Lean emitter and the audit ask for
    them. ``lhs_text``/``rhs_text`` are their printed forms (what JSON reports
    show), cached so that rendering a report need not import sympy.
    """

    expr: str
    relation: Relation
    var_names: tuple[str, ...]
    var_paths: tuple[FieldPath, ...]
    evaluate: Callable[[Sequence[Fraction]], tuple[Any, Any]] = field(
        repr=False, compare=False)
    # the verdict at parsed Decimals, or None (see identity_decimal.compile_decimal_check);
    # None for an identity that divides
    holds: Callable[[Sequence[Any], Any], bool | None] | None = field(default=None, repr=False, compare=False)

    def __reduce__(self) -> tuple:
        # pickled as its text: the closures are compiled again where it is loaded
        return identity_of, (self.expr, self.var_names, self.var_paths)

    @cached_property
    def _sympy(self) -> tuple[Any, Any]:
        from .identity import parse_identity

        _, lhs, rhs = parse_identity(self.expr, self.var_names)
        return lhs, rhs

    @property
    def lhs(self) -> Any:
        """The left side as a sympy expression (imports sympy)."""
        return self._sympy[0]

    @property
    def rhs(self) -> Any:
        """The right side as a sympy expression (imports sympy)."""
        return self._sympy[1]

    @property
    def lhs_text(self) -> str:
        from .identity import side_texts

        return side_texts(self.expr, self.var_names)[0]

    @property
    def rhs_text(self) -> str:
        from .identity import side_texts

        return side_texts(self.expr, self.var_names)[1]

    @property
    def symbols(self) -> tuple[Any, ...]:
        import sympy

        return tuple(sympy.Symbol(n) for n in self.var_names)


@dataclass(frozen=True)
class Gate:
    """A validated gate spec (see :func:`mmverify.gates.compile_gates`).

    Common: ``id``, ``form`` (one of FORMS), ``level`` (A/B/C), ``severity``
    (hard/soft), ``description`` (the statement quote; never printed by
    ``mmverify gate``), ``tolerance`` (exact, or None) with its anchor text and
    written reason, ``position`` (index in ``task.json``'s gates list) and
    ``inputs`` (every path the gate reads, in declaration order).

    Form-specific (unused fields keep their defaults):

    * range: ``lower`` / ``upper`` (:class:`Bound` or None);
    * integer: ``binary`` (x in {0, 1} instead of x in Z);
    * order: ``chain`` (the paths, in order) or ``chain_list`` (one ``[*]``
      path whose elements must be ordered); ``strict``;
    * identity: ``identity`` (:class:`Identity`); ``aggregate`` ``(name, "max"
      | "min")`` when one variable is the largest or smallest element of a
      ``[*]`` list (its path), read whole: the gate then has one instance;
    * finite_domain: ``domain`` (member texts as written) and
      ``domain_numbers`` (Fraction for members that are decimal texts, else None);
    * partition_sum: ``parts`` (paths; a ``[*]`` part contributes every element,
      or, when ``total`` is itself a ``[*]`` path over the same list, the
      element of the same index), ``total`` (a path) or ``total_value`` (exact,
      with ``total_text``).
    """

    id: str
    form: FormName
    level: Level
    severity: Severity
    description: str
    position: int
    inputs: tuple[FieldPath, ...]
    tolerance: Fraction | None = None
    tolerance_text: str | None = None
    tolerance_reason: str | None = None
    lower: Bound | None = None
    upper: Bound | None = None
    binary: bool = False
    chain: tuple[FieldPath, ...] = ()
    chain_list: FieldPath | None = None
    strict: bool = False
    identity: Identity | None = None
    aggregate: tuple[str, str] | None = None
    domain: tuple[str, ...] = ()
    domain_numbers: tuple[Fraction | None, ...] = ()
    parts: tuple[FieldPath, ...] = ()
    total: FieldPath | None = None
    total_value: Fraction | None = None
    total_text: str | None = None
    verifies: tuple[FieldPath, ...] = ()
    # a claim gate ``claimed == replayed`` whose replayed values the statement
    # alone determines (the replay module's ``STATEMENT``): passing it decides
    # the claims it verifies (r = 1); set by the compiler
    decides: bool = False

    @property
    def hard(self) -> bool:
        return self.severity == "hard"

    @property
    def claim(self) -> bool:
        """A claim gate: its failure refutes the claims it verifies (r = 0), not the task."""
        return self.severity == "claim"

    @property
    def scored(self) -> bool:
        """Whether the gate's verdict can change a score (hard or claim)."""
        return self.severity in SCORED_SEVERITIES


def identity_of(expr: str, var_names: tuple[str, ...], var_paths: tuple[FieldPath, ...]) -> Identity:
    """An :class:`Identity` compiled from its text (``IdentityError`` on a defect):
    how a gate's is built, and how one is unpickled."""
    from .identity import compile_identity
    from .identity_decimal import compile_decimal_check

    relation, evaluate = compile_identity(expr, var_names)
    return Identity(expr=" ".join(expr.split()), relation=relation, var_names=var_names, var_paths=var_paths,
                    evaluate=evaluate, holds=compile_decimal_check(expr, var_names))


@dataclass(frozen=True)
class GateInstance:
    """One closed obligation of a gate on one artifact, with its exact verdict.

    Identification and verdict
        ``gate_id``, ``form``, ``level``, ``severity``; ``index`` (element index
        for a ``[*]`` expansion, pair index for an ordered list, else None);
        ``paths`` (concrete paths read, in operand order); ``values`` (what the
        artifact holds there, as text: exact decimal text for numbers, the label
        for finite-domain strings, ``<type ...>`` for a wrong type, None when
        absent); ``verdict``; ``reason`` (see module doc); ``detail`` (human text
        naming values and bound, built from ``detail_source`` on first use);
        ``tolerance`` (decimal text of the declared
        tolerance, or None — an audited assumption of the predicate).

    Exact data for the Lean layer (set only when every input is usable, i.e.
    for ``pass`` and ``violated`` verdicts; otherwise empty/None):

    * ``operands``: the numeric values read, aligned with ``paths``
      (range/integer/finite_domain: 1; order: the chain; identity: one per
      variable in ``vars`` order; partition_sum: every part then, if read from a
      path, the total);
    * range: ``lower``/``lower_strict``, ``upper``/``upper_strict``;
      predicate ``lower - tol <(=) x <(=) upper + tol``;
    * integer: ``binary``; predicate ``min_k |x - k| <= tol`` over k in Z (or
      k in {0, 1});
    * order: ``strict``; predicate ``x_i <(=) x_{i+1} + tol`` for consecutive
      operands;
    * identity: ``relation``, ``identity`` (the gate's :class:`Identity`;
      ``lhs``/``rhs`` give its sides in sympy, built on first use), ``bindings`` ((name,
      Fraction) pairs in ``vars`` order), ``lhs_value``/``rhs_value`` (exact);
      over an aggregate, ``operands`` hold every element of its list in place
      of the one variable, ``bindings`` its largest (smallest) element, and
      ``aggregate`` says where the elements are;
      predicate: ``==`` is ``|l - r| <= tol``, ``<=``/``<`` are ``l <(=) r + tol``,
      ``>=``/``>`` are ``l >(=) r - tol``;
    * finite_domain: ``domain`` (member texts), ``domain_numbers``, ``label``
      (the normalised artifact label when it is a string), ``member`` (index of
      the matching member or None); a number matches a numeric member within
      tol, a label matches a member after trim + case-fold;
    * partition_sum: ``parts`` (the exact part values), ``total`` (read or
      declared), ``parts_sum``; predicate ``|sum - total| <= tol``.
    ``tolerance_value`` is the exact tolerance (0 when none is declared).
    """

    gate_id: str
    form: FormName
    level: Level
    severity: Severity
    index: int | None
    paths: tuple[str, ...]
    values: tuple[str | None, ...]
    verdict: Verdict
    reason: str | None
    detail_source: Any = field(default="", repr=False, compare=False)   # text, or a function making it
    tolerance: str | None = None
    tolerance_value: Fraction = Fraction(0)
    operands: tuple[Fraction, ...] = ()
    lower: Fraction | None = None
    lower_strict: bool = False
    upper: Fraction | None = None
    upper_strict: bool = False
    binary: bool = False
    strict: bool = False
    relation: Relation | None = None
    identity: Identity | None = field(default=None, repr=False, compare=False)
    bindings: tuple[tuple[str, Fraction], ...] = ()
    # identity over an aggregate: (name, "max" | "min", first, count), the
    # list's elements being operands[first:first + count] (bindings hold its value)
    aggregate: tuple[str, str, int, int] | None = None
    lhs_value: Fraction | None = None
    rhs_value: Fraction | None = None
    domain: tuple[str, ...] = ()
    domain_numbers: tuple[Fraction | None, ...] = ()
    label: str | None = None
    member: int | None = None
    parts: tuple[Fraction, ...] = ()
    total: Fraction | None = None
    parts_sum: Fraction | None = None
    # makes the fields of LAZY_EXACT on first use (None: they were given, or are empty)
    exact_source: Any = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        # reached only for an attribute the instance does not hold yet: the
        # exact data read from the artifact (LAZY_EXACT), made here once
        if name not in _LAZY_DEFAULTS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        d = object.__getattribute__(self, "__dict__")
        source = d.get("exact_source")
        made = source() if source is not None else {}
        for key, default in _LAZY_DEFAULTS.items():
            d.setdefault(key, made.get(key, default))
        d["exact_source"] = None
        return d[name]

    def __getstate__(self) -> dict[str, Any]:
        # pickled (a worker process, a cache) with its detail text and exact
        # data made: the functions that make them stay behind
        for name in LAZY_EXACT:
            getattr(self, name)
        return dict(self.__dict__, detail_source=self.detail, exact_source=None)

    @property
    def hard(self) -> bool:
        return self.severity == "hard"

    @property
    def scored(self) -> bool:
        return self.severity in SCORED_SEVERITIES

    @property
    def detail(self) -> str:
        """Human text naming values and bound; built on first use (a report
        that is never rendered, such as a reward, never builds it)."""
        d = self.detail_source
        if not isinstance(d, str):
            d = d()
            object.__setattr__(self, "detail_source", d)
        return d

    @property
    def lhs(self) -> Any:
        """The identity's left side (sympy; built on first use), or None."""
        return self.identity.lhs if self.identity is not None else None

    @property
    def rhs(self) -> Any:
        """The identity's right side (sympy; built on first use), or None."""
        return self.identity.rhs if self.identity is not None else None

    @property
    def name(self) -> str:
        """``gate_id`` or ``gate_id[i]`` for an element instance."""
        return self.gate_id if self.index is None else f"{self.gate_id}[{self.index}]"

    @property
    def binding_map(self) -> dict[str, Fraction]:
        return dict(self.bindings)

    @property
    def decided(self) -> bool:
        """True when the exact predicate was evaluated (pass, or fail by violation)."""
        return self.verdict == "pass" or self.reason == "violated"

    def headline(self) -> str:
        """One line: gate, verdict, values and bound."""
        return f"{self.name} ({self.severity} {self.form}) {self.verdict.upper()}: {self.detail}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-able and deterministic: artifact values and statement bounds only."""
        out: dict[str, Any] = {
            "gate": self.gate_id, "form": self.form, "level": self.level, "severity": self.severity,
            "index": self.index, "paths": list(self.paths), "values": list(self.values),
            "verdict": self.verdict, "reason": self.reason, "detail": self.detail,
            "tolerance": self.tolerance,
        }
        from .registry import FORM_TABLE

        out["exact"] = FORM_TABLE[self.form].bounds(self)
        return out


class GateVerdict(NamedTuple):
    """The verdict of one gate instance and only what a score reads of it: no
    exact data, no detail. ``evaluate_gates(..., hard_only=True)`` makes these
    (decided by the same predicates as :class:`GateInstance`), for the reward."""

    gate_id: str
    severity: str
    index: int | None
    paths: tuple[str, ...]
    values: tuple[Any, ...]      # as read: a number as parsed (Decimal or int), else its report text; None: absent
    verdict: str
    reason: str | None

    @property
    def hard(self) -> bool:
        return self.severity == "hard"

    @property
    def scored(self) -> bool:
        return self.severity in SCORED_SEVERITIES

    @property
    def name(self) -> str:
        return self.gate_id if self.index is None else f"{self.gate_id}[{self.index}]"


def verified_paths(gate: Gate, index: int | None) -> list[str]:
    """The concrete paths a passing instance (``index``) of ``gate`` verifies."""
    return [concrete(path, index) if path.is_list and index is not None else path.text for path in gate.verifies]


@dataclass(frozen=True)
class GateReport:
    """Every gate instance of one artifact against one task, in gate order then index.

    A report made by :meth:`deferred` holds what a score reads (no hard
    failure, no hard gap, the verified paths) and makes its instances when
    first read (rendering, counts, equality, pickling): the same instances,
    from the same pure evaluation."""

    task_id: str
    instances: tuple[GateInstance, ...]
    gates: tuple[Gate, ...] = field(default=(), repr=False)
    replay: Any = None         # mmverify.replay.ReplayReport, None for a task without replay

    @classmethod
    def deferred(cls, task_id: str, gates: tuple[Gate, ...], replay: Any, make: Callable[[], Any],
                 known: Any) -> "GateReport":
        """A report whose every hard instance is known to pass (``known``, a
        :class:`mmverify.gates.quick.HardGatesPassed`), its instances made by
        ``make()`` on first read."""
        report = object.__new__(cls)
        report.__dict__.update(task_id=task_id, gates=gates, replay=replay, _make=make, _known=known)
        return report

    def __getattr__(self, name: str) -> Any:
        if name == "instances":
            d = self.__dict__
            make = d.get("_make")
            if make is not None:
                made = d.setdefault("instances", tuple(make()))   # (two threads may both make them: equal)
                d.pop("_make", None)                # the artifact's data is let go
                d.pop("_known", None)
                return made
            if "instances" in d:                    # made by another thread meanwhile
                return d["instances"]
        raise AttributeError(name)

    def __getstate__(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "instances": self.instances, "gates": self.gates, "replay": self.replay}

    def _summary(self) -> Any:
        """The all-pass summary of a deferred report whose instances are not made yet, else None."""
        return self.__dict__.get("_known")

    def verified(self) -> frozenset[str]:
        """Concrete artifact paths a passing hard or claim gate verifies
        (``verifies``), less those a failing claim gate refutes."""
        known = self._summary()
        if known is not None:
            return known.verified_paths
        return self._passing_claims(lambda gate, inst: bool(gate.verifies) and inst.scored)

    def refuted(self) -> dict[str, str]:
        """Concrete artifact paths a failing claim gate refutes, with why (the
        first such gate): those claims score 0 (``refuted_claim``)."""
        if self._summary() is not None:
            return {}
        by_id = {g.id: g for g in self.gates}
        out: dict[str, str] = {}
        for inst in self.instances:
            if inst.verdict != "fail" or inst.severity != "claim":
                continue
            gate = by_id.get(inst.gate_id)
            if gate is None:
                continue
            for p in verified_paths(gate, inst.index):
                out.setdefault(p, f"claim gate {inst.name} refutes it: " +
                               (inst.detail if isinstance(inst, GateInstance) else inst.reason or "violated"))
        return out

    def decided(self) -> frozenset[str]:
        """Concrete artifact paths a passing deciding claim gate (``claimed ==
        replayed`` on a value the statement determines) decides: r = 1."""
        known = self._summary()
        if known is not None:
            return known.decided_paths
        return self._passing_claims(lambda gate, inst: gate.decides)

    def _passing_claims(self, counts: Callable[[Gate, Any], bool]) -> frozenset[str]:
        """The concrete paths that passing instances of the gates ``counts``
        accepts verify, less those a failing claim gate refutes."""
        by_id = {g.id: g for g in self.gates}
        out: set[str] = set()
        for inst in self.instances:
            gate = by_id.get(inst.gate_id)
            if gate is not None and inst.verdict == "pass" and counts(gate, inst):
                out.update(verified_paths(gate, inst.index))
        return frozenset(out.difference(self.refuted())) if out else frozenset()

    @property
    def hard_failures(self) -> tuple[GateInstance, ...]:
        if self._summary() is not None:
            return ()
        return tuple(i for i in self.instances if i.verdict == "fail" and i.hard)

    def hard_gaps(self) -> tuple[GateInstance, ...]:
        """The hard and claim instances that could not be checked (verdict
        ``gap``), in order: the gaps that can change a score."""
        if self._summary() is not None:
            return ()
        gaps = [i for i in self.instances if i.verdict == "gap"]
        return tuple(i for i in gaps if i.scored) if gaps else ()

    def any_failure(self) -> bool:
        """Whether some instance, hard or soft, fails."""
        return any(i.verdict == "fail" for i in self.instances)

    @property
    def soft_failures(self) -> tuple[GateInstance, ...]:
        return tuple(i for i in self.instances if i.verdict == "fail" and not i.hard)

    @property
    def gaps(self) -> tuple[GateInstance, ...]:
        return tuple(i for i in self.instances if i.verdict == "gap")

    @property
    def passes(self) -> tuple[GateInstance, ...]:
        return tuple(i for i in self.instances if i.verdict == "pass")

    @property
    def counts(self) -> dict[str, Any]:
        """``{"total", "pass", "fail", "gap", "hard_failures", "soft_failures",
        "by_form": {form: {"pass", "fail", "gap"}}}`` (every form listed)."""
        from .registry import FORMS

        by_form = {f: {v: 0 for v in VERDICTS} for f in FORMS}
        for i in self.instances:
            by_form[i.form][i.verdict] += 1
        out: dict[str, Any] = {"total": len(self.instances)}
        for v in VERDICTS:
            out[v] = sum(1 for i in self.instances if i.verdict == v)
        out["hard_failures"] = len(self.hard_failures)
        out["soft_failures"] = len(self.soft_failures)
        out["by_form"] = by_form
        return out

    def as_dict(self) -> dict[str, Any]:
        out = {"task": self.task_id, "counts": self.counts,
               "instances": [i.as_dict() for i in self.instances]}
        if self.replay is not None:
            out["replay"] = self.replay.as_dict()
        return out

    def count_line(self) -> str:
        c = self.counts
        return (f"gates    {c['total']} instance(s): {c['pass']} pass, {c['fail']} fail "
                f"({c['hard_failures']} hard), {c['gap']} gap")

    def summary_lines(self) -> list[str]:
        """Plain-text lines for the score table: the count line, then one line per
        failing or gap instance."""
        lines = [self.count_line()]
        for i in self.instances:
            if i.verdict != "pass":
                lines.append(f"  {i.verdict.upper():<4} {i.severity:<4} {i.name}: {i.detail}")
        return lines



# The exact data an instance reads from the artifact (Fractions of its numbers
# and what is computed from them): the Lean layer, the audit and the exact
# block of a report ask for it, a score does not, so a gate form may hand over
# a function making it (``exact_source``) instead of the values. These fields
# have no class default: reading one the instance does not hold reaches
# ``GateInstance.__getattr__``, which makes them.
LAZY_EXACT = ("operands", "bindings", "lhs_value", "rhs_value")
_LAZY_DEFAULTS: dict[str, Any] = {
    name: GateInstance.__dataclass_fields__[name].default for name in LAZY_EXACT}  # type: ignore[attr-defined]
for _name in LAZY_EXACT:
    delattr(GateInstance, _name)

# Every other field with a default keeps it as a class attribute (an immutable
# value), so an instance made by make_instance holds just what differs.


def make_instance(template: dict[str, Any], fields: dict[str, Any]) -> GateInstance:
    """A :class:`GateInstance` from a per-gate ``template`` (the gate's own
    fields: id, form, level, severity, tolerance) and the instance's
    ``fields``, every other field at its default: equal to
    ``GateInstance(**template, **fields)``, without running the generated
    ``__init__`` once per field (the hottest allocation of scoring)."""
    inst = object.__new__(GateInstance)
    d = inst.__dict__
    d.update(template)
    d.update(fields)
    return inst
