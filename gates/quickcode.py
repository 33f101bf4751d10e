"""The all-pass check of :mod:`.quick`, generated once per task as straight code.

Design notes: docs/architecture.md, `gates/quickcode.py`.
"""
from __future__ import annotations

from decimal import Decimal, getcontext, setcontext
from fractions import Fraction
from itertools import repeat
from typing import Any, Callable

from mmverify.reading import paths
from mmverify.reading.paths import FieldPath

from mmverify.reading.labels import normalise_label
from mmverify.reading.numbers import exact_decimal
from mmverify.reading.pathcode import PathWriter
from mmverify.replay import ROOT as REPLAY_ROOT

from . import identity_decimal, predicates
from .model import Gate, verified_paths
from .predicates import ZERO
from .registry import FORM_TABLE

def usable(value: Any, labels: bool = False) -> bool:
    """Whether the gate forms read ``value`` as a number (or, for ``labels``, a
    label): the parser's exact types only; anything else is left to the
    instances (``exact.read``)."""
    cls = value.__class__
    return ((cls is Decimal and value.is_finite()) or cls is int or cls is Fraction
            or (labels and cls is str))


_FINITE = Decimal.is_finite
_DECIMAL = frozenset({Decimal})
_NUMBERS = frozenset({Decimal, int, Fraction})
_LABELS = frozenset({Decimal, int, Fraction, str})


def all_usable(values: list[Any], labels: bool = False) -> bool:
    """``usable`` of every value (tested in C where they are all Decimals)."""
    types = set(map(type, values))
    if types == _DECIMAL:
        return all(map(_FINITE, values))
    if not types <= (_LABELS if labels else _NUMBERS):
        return False
    return Decimal not in types or all(x.is_finite() for x in values if x.__class__ is Decimal)


def _all_usable_labels(values: list[Any]) -> bool:
    return all_usable(values, True)


class _Writer(PathWriter):
    """The lines of the generated function, the constants it names, and what
    it has read (:class:`~mmverify.reading.pathcode.PathWriter`), with the columns
    of ``[*]`` paths and the usability tests of the values read."""

    def __init__(self) -> None:
        super().__init__({"Decimal": Decimal, "ALL_UN": all_usable, "ALL_UL": _all_usable_labels,
                          "repeat": repeat, "UNDECIDED": identity_decimal.UNDECIDED, "Fraction": Fraction,
                          "DIVIDE": identity_decimal.QUOTIENT.divide})
        # the lines of the comparisons (reads and checks as they come), then of the other gates: their
        # reads, the test of every value read for usability, their checks (see :func:`generate`)
        self.first: list[str] = self.lines
        self.reads_later: list[str] = []
        self.later: list[str] = []
        # the locals read whose values must be usable (as numbers, as labels), the replayed ones (Fractions)
        # apart from the artifact's (Decimals, mostly): tested at once after the reads
        self.checked: dict[tuple[str, bool], dict[str, None]] = {}
        self.values = False                            # whether ``values = values_of(view)`` is written
        self.exact = False                             # whether an identity's sides are written out
        self.temps = 0

    def temp(self) -> str:
        """A fresh local name for a part of an identity computed once."""
        self.temps += 1
        return f"s{self.temps}"

    def column(self, path: FieldPath, usable: str, empty: bool = False) -> str:
        """The local holding the item values of a ``[*]`` path, each usable, read once;
        the generated code declines when the list is absent, empty (unless ``empty``)
        or holds one not usable."""
        head, tail = path.split()
        container = self.walk(head.segments)
        if ("list", container) not in self.reads:
            self.reads["list", container] = container
            self.reads_out.append(f"    if {container}.__class__ is not list:")
            self.reads_out.append("        return None")
        if not empty and ("items", container) not in self.reads:
            self.reads["items", container] = container
            self.reads_out.append(f"    if not {container}:")
            self.reads_out.append("        return None")
        key = ("column", path.text, usable)
        if key in self.reads:
            return self.reads[key]
        local = f"c{len(self.reads)}"
        self.reads[key] = local
        if not tail.segments:       # the list's items themselves
            self.reads_out.append(f"    {local} = {container}")
        elif len(tail.segments) == 1 and tail.segments[0].__class__ is str:
            k = tail.segments[0]
            self.reads_out.append(f"    {local} = [e.get({k!r}, MISSING) if e.__class__ is dict else MISSING "
                             f"for e in {container}]")
        else:
            getter = self.const(lambda item, _tail=tail: paths.get(item, _tail), "G")
            self.reads_out.append(f"    {local} = [{getter}(e) for e in {container}]")
        self.check(f"*{local}", usable, path)
        return local

    def check(self, local: str, usable: str, path: FieldPath) -> None:
        """Note that the value of ``local`` (or with ``*local``, every value of a
        column), read at ``path``, must be usable (``usable``: UN or UL)."""
        self.checked.setdefault((usable, path.segments[0] == REPLAY_ROOT), {})[local] = None

    def usability(self) -> list[str]:
        """The lines declining unless every value read for a row is usable: one
        test of them all (a column's values are spread into it)."""
        out = []
        for (kind, _), values in sorted(self.checked.items()):
            if values:
                out.append(f"    if not ALL_{kind}([{', '.join(values)}]):")
                out.append("        return None")
        return out


def _row_gate(w: _Writer, gate: Gate) -> None:
    """The lines testing every row of a gate with one instance per row."""
    entry = FORM_TABLE[gate.form]
    usable = "UL" if entry.reads_labels else "UN"
    test = w.const(predicates.row_test(gate, gate.tolerance or ZERO, entry.verdict), "T")
    inputs = gate.inputs
    for p in inputs:
        if not p.is_list:
            w.check(w.walk(p.segments), usable, p)
    if _inline_rows(w, gate, test, usable):
        return
    if not any(p.is_list for p in inputs):
        row = ", ".join(w.reads[p.segments] for p in inputs)
        w.lines.append(f"    if not {test}(({row},)):")
        w.lines.append("        return None")
        _verifies(w, gate, None)
        return
    cols = [w.column(p, usable) if p.is_list else None for p in inputs]
    first = next(c for c in cols if c is not None)
    parts = [c if c is not None else f"repeat({w.reads[p.segments]}, len({first}))" for c, p in zip(cols, inputs)]
    w.lines.append(f"    for row in zip({', '.join(parts)}):")
    w.lines.append(f"        if not {test}(row):")
    w.lines.append("            return None")
    _verifies(w, gate, first)


def _identity_condition(w: _Writer, gate: Gate, variables: list[str]) -> str | None:
    """An identity gate's verdict on one row as a Python condition over the
    row's values ``variables`` (the sides of :func:`.identity_decimal.decimal_sides`,
    which is exact or raises one of ``UNDECIDED`` with ``EXACT`` as the current
    context, as the generated check runs), or None where there is none."""
    ident = gate.identity
    if ident is None or ident.holds is None or tuple(gate.inputs) != tuple(ident.var_paths):
        return None
    sides = identity_decimal.decimal_sides(ident.expr, ident.var_names, variables, lambda d: w.const(d, "K"), w.temp)
    if sides is None:
        return None
    relation, left, right = sides
    tol = gate.tolerance or ZERO
    if not tol:
        condition = f"{left} {relation} {right}"
    else:
        tol_d = exact_decimal(tol)
        diff = f"({left} - {right})"
        if relation == "==":
            condition = f"abs{diff} <= {w.const(tol_d, 'K')}"
        elif relation in ("<=", "<"):
            condition = f"{diff} {relation} {w.const(tol_d, 'K')}"
        else:   # (-tol would round a Decimal in the thread's context)
            neg = tol_d.copy_negate() if tol_d.__class__ is Decimal else -tol_d
            condition = f"{diff} {relation} {w.const(neg, 'K')}"
    try:        # nested past the compiler's limits: the row test decides
        compile(f"not {condition}", "<identity row>", "eval")
    except (SyntaxError, RecursionError, MemoryError):
        return None
    return condition


def _range_condition(w: _Writer, gate: Gate, low: str, high: str) -> str:
    """A range gate's verdict (``row_test``'s ``in_range``) as a condition on the
    least value ``low`` and the greatest ``high`` of its rows: its bounds with
    the tolerance, as the equal Decimals where they terminate, compare exactly
    with every usable value (a replayed value, a Fraction, the faster with the
    Fraction bounds)."""
    replayed = gate.inputs[0].segments[0] == REPLAY_ROOT
    lo_d, hi_d = predicates.tolerated_bounds(gate, gate.tolerance or ZERO, replayed)
    lo_op = "<" if gate.lower is not None and gate.lower.strict else "<="
    hi_op = "<" if gate.upper is not None and gate.upper.strict else "<="
    parts = []
    if lo_d is not None:
        parts.append(f"{w.const(lo_d, 'K')} {lo_op} {low}")
    if hi_d is not None:
        parts.append(f"{high} {hi_op} {w.const(hi_d, 'K')}")
    condition = " and ".join(parts) if parts else "True"
    if not replayed or low != high:
        return condition
    # a single Fraction against Fraction bounds: cross-multiplied in integers (denominators are positive)
    ints = []
    if lo_d is not None:
        ints.append(f"{w.const(lo_d.numerator, 'K')} * {low}.denominator {lo_op} "
                    f"{low}.numerator * {w.const(lo_d.denominator, 'K')}")
    if hi_d is not None:
        ints.append(f"{low}.numerator * {w.const(hi_d.denominator, 'K')} {hi_op} "
                    f"{w.const(hi_d.numerator, 'K')} * {low}.denominator")
    return f"(({' and '.join(ints) or 'True'}) if {low}.__class__ is Fraction else ({condition}))"


def _value_condition(w: _Writer, gate: Gate, x: str, test: str) -> str | None:
    """An integer or finite-domain gate's verdict (``row_test``'s) on the value
    ``x`` as a condition, where the gate has no tolerance; else None."""
    if gate.tolerance:
        return None
    if gate.form == "integer":
        if gate.binary:
            return f"({x} == 0 or {x} == 1)"
        return (f"({x}.__class__ is int or ({x} == {x}.to_integral_value() if {x}.__class__ is Decimal "
                f"else {x}.__class__ is Fraction and {x}.denominator == 1))")
    if gate.form == "finite_domain":
        numbers = frozenset(v for v in gate.domain_numbers if v is not None)   # equal numbers hash equal
        labels = frozenset(normalise_label(v) for v in gate.domain)
        # (a label as the task writes it, or already normalised, is a member without normalising)
        written = frozenset(v for v in (*gate.domain, *labels) if normalise_label(v) in labels)
        return (f"({x} in {w.const(numbers, 'K')} if {x}.__class__ is not str else "
                f"{x} in {w.const(written, 'K')} or {w.const(normalise_label, 'N')}({x}) in {w.const(labels, 'K')})")
    return None


def _inline_rows(w: _Writer, gate: Gate, test: str, usable: str) -> bool:
    """The lines deciding every row of a gate in place: an identity with its
    sides written out, a range, integer or finite-domain gate with its
    comparison (a row an identity's sides cannot decide is left to the row
    test ``test``); False (and no lines) where the gate has no such form."""
    inputs = gate.inputs
    lists = [p for p in inputs if p.is_list]
    loop = {text: f"x{k}" for k, text in enumerate(dict.fromkeys(p.text for p in lists))}   # one per column
    values = [loop[p.text] if p.is_list else w.reads[p.segments] for p in inputs]
    replayed: dict[int, str] = {}
    if gate.form == "identity" and lists and _compared_columns(w, gate, values, loop, test, usable):
        return True
    if gate.form == "identity":
        # a replayed value is a Fraction: its equal Decimal where that terminates (``identity_decimal.QUOTIENT``)
        replayed = {k: f"y{k}" for k, p in enumerate(inputs) if p.segments[0] == REPLAY_ROOT}
        condition = _identity_condition(w, gate, [replayed.get(k, v) for k, v in enumerate(values)])
    elif gate.form == "range" and len(inputs) == 1:
        if lists:       # every row in range: the least and the greatest
            col = w.column(lists[0], usable)
            w.lines.append(f"    if not ({_range_condition(w, gate, f'min({col})', f'max({col})')}):")
            w.lines.append("        return None")
            _verifies(w, gate, col)
            return True
        condition = _range_condition(w, gate, values[0], values[0])
    elif gate.form == "order" and not lists and not gate.tolerance:
        condition = (" < " if gate.strict else " <= ").join(values)     # each value against the next
    elif len(inputs) == 1:
        condition = _value_condition(w, gate, values[0], test)
    else:
        condition = None
    if condition is None:
        return False
    row = ", ".join(values)
    indent = "    "
    if lists:
        cols = {p.text: w.column(p, usable) for p in lists}
        names = list(loop.values())
        target = names[0] if len(names) == 1 else ", ".join(names)
        source = cols[lists[0].text] if len(names) == 1 else f"zip({', '.join(cols.values())})"
        w.lines.append(f"    for {target} in {source}:")
        indent = "        "
    if gate.form == "identity":
        w.lines.append(f"{indent}try:")
        for k, y in replayed.items():
            x = values[k]
            w.lines.append(f"{indent}    {y} = {x} if {x}.__class__ is not Fraction "
                           f"else DIVIDE(Decimal({x}.numerator), {x}.denominator)")
        w.lines.append(f"{indent}    if not {condition}:")
        w.lines.append(f"{indent}        return None")
        w.lines.append(f"{indent}except UNDECIDED:")
        w.lines.append(f"{indent}    if not {test}(({row},)):")
        w.lines.append(f"{indent}        return None")
        w.exact = True
    else:
        w.lines.append(f"{indent}if not ({condition}):")
        w.lines.append(f"{indent}    return None")
    _verifies(w, gate, cols[lists[0].text] if lists else None)
    return True


def _compared_columns(w: _Writer, gate: Gate, values: list[str], loop: dict[str, str], test: str,
                      usable: str) -> bool:
    """The lines of an identity gate over lists whose sides are a value each,
    without a tolerance (``lo <= x``): its rows compared in one pass over the
    columns (a scalar or a constant side repeated); False (and no lines) for
    any other identity."""
    if gate.tolerance or gate.identity is None or gate.identity.holds is None:
        return False
    sides = identity_decimal.decimal_sides(gate.identity.expr, gate.identity.var_names, values,
                                           lambda d: w.const(d, "K"), w.temp)
    if sides is None or "(" in sides[1] or "(" in sides[2]:
        return False
    relation, left, right = sides
    lists = [p for p in gate.inputs if p.is_list]
    cols = {p.text: w.column(p, usable) for p in lists}
    of_loop = {x: cols[text] for text, x in loop.items()}
    args = [of_loop[side] if side in of_loop else f"repeat({side})" for side in (left, right)]
    compare = w.const(identity_decimal.COMPARE[relation], "O")
    w.lines.append("    try:")
    w.lines.append(f"        if not all(map({compare}, {args[0]}, {args[1]})):")
    w.lines.append("            return None")
    w.lines.append("    except UNDECIDED:")
    names = list(loop.values())
    source = cols[lists[0].text] if len(names) == 1 else f"zip({', '.join(cols.values())})"
    w.lines.append(f"        for {', '.join(names)} in {source}:")
    w.lines.append(f"            if not {test}(({', '.join(values)},)):")
    w.lines.append("                return None")
    _verifies(w, gate, cols[lists[0].text])
    return True


def _ordered_column(w: _Writer, gate: Gate) -> bool:
    """The lines of an order gate over one list without a tolerance: each
    value against the next, in one pass (``verdict_order``'s comparisons);
    False (and no lines) for any other order gate."""
    if gate.form != "order" or gate.chain_list is None or gate.tolerance or gate.verifies:
        return False
    col = w.column(gate.chain_list, "UN")
    compare = w.const(identity_decimal.COMPARE["<" if gate.strict else "<="], "O")
    w.lines.append(f"    if not all(map({compare}, {col}, {col}[1:])):")
    w.lines.append("        return None")
    return True


def _summed_parts(w: _Writer, gate: Gate, check: Callable[[Any], Any]) -> bool:
    """The lines of a partition gate whose total is a single value or a
    constant: its parts (single values, or every item of a list) summed in
    place (exact, or one of ``UNDECIDED`` under ``EXACT``: then the form's own
    check ``check`` decides); False (and no lines) for a total per item."""
    if gate.form != "partition_sum" or gate.verifies or (gate.total is not None and gate.total.is_list):
        return False
    parts = []
    for p in gate.parts:
        if p.is_list:         # every item a part (an empty list adds none)
            parts.append(f"sum({w.column(p, 'UN', empty=True)})")
            continue
        parts.append(w.walk(p.segments))
        w.check(parts[-1], "UN", p)
    if gate.total is not None:
        total = w.walk(gate.total.segments)
        w.check(total, "UN", gate.total)
    else:
        total = w.const(exact_decimal(gate.total_value), "K")
    summed = f"({' + '.join(parts)})"
    tol = gate.tolerance or ZERO
    condition = f"{summed} == {total}" if not tol else f"abs({summed} - {total}) <= {w.const(exact_decimal(tol), 'K')}"
    w.lines.append("    try:")
    w.lines.append(f"        if not {condition}:")
    w.lines.append("            return None")
    w.lines.append("    except UNDECIDED:")
    w.lines.append(f"        if {w.const(check, 'Q')}(values_of(view)) is None:")
    w.lines.append("            return None")
    w.exact = True
    return True


def _verifies(w: _Writer, gate: Gate, column: str | None) -> None:
    """The line adding the paths a gate's passing rows verify (``column``: the
    local of its first list input, whose length is the number of rows)."""
    if not gate.verifies:
        return
    if column is not None:
        w.lines.append(f"    verified.update({w.const(_verified_rows(gate), 'V')}(len({column})))")
    else:
        w.lines.append(f"    verified.update({w.const(tuple(verified_paths(gate, None)), 'V')})")


def _verified_rows(gate: Gate) -> Callable[[int], frozenset[str]]:
    """The paths a gate's passing rows 0..n-1 verify, worked out once per n."""
    memo: dict[int, frozenset[str]] = {}

    def of(n: int) -> frozenset[str]:
        hit = memo.get(n)
        if hit is None:
            hit = memo[n] = frozenset(p for i in range(n) for p in verified_paths(gate, i))
        return hit
    return of


def _special_gate(w: _Writer, gate: Gate, check: Callable[[Any], Any]) -> None:
    """The lines calling a form's own check (an order chain, a whole partition)."""
    name = w.const(check, "Q")
    if not w.values:
        w.values = True
        w.lines.append("    values = values_of(view)")
    w.lines.append(f"    got = {name}(values)")
    w.lines.append("    if got is None:")
    w.lines.append("        return None")
    if gate.verifies:
        w.lines.append("    for index in got:")
        w.lines.append(f"        verified.update({w.const(lambda i, _g=gate: verified_paths(_g, i), 'V')}(index))")


def generate(gates: tuple[Gate, ...], special: Callable[[Gate], Callable[[Any], Any] | None]) -> tuple[str, dict[str, Any]]:
    """The source of ``all_pass`` for ``gates`` (a task's hard gates) and the namespace it runs in.
    ``special(gate)`` is a form's own check for a gate that is not one
    instance per row, else None. ``EXACT`` in the namespace says that the
    source writes out an identity's sides: it must run with that context as
    the current one (:func:`compile_check` sees to it)."""
    w = _Writer()
    # The comparisons first, each value read where it is first needed, so that an artifact breaking one
    # is declined early; a value that is not usable makes one fail or raise (declined: compile_check),
    # or passes it, to be declined below. Then the reads of the other gates, the test of every value
    # read for usability, and those gates, whose arithmetic and row predicates see usable values only.
    # (A check that declines declines wherever it stands: the order changes no answer.)
    first = [g for g in gates if _compares(g)]
    for gate in first + [g for g in gates if not _compares(g)]:
        if not _compares(gate) and w.lines is w.first:
            w.reads_out, w.lines = w.reads_later, w.later
        if _ordered_column(w, gate):
            continue
        own = special(gate)
        if own is not None and _summed_parts(w, gate, own):
            continue
        if own is not None:
            _special_gate(w, gate, own)
        else:
            _row_gate(w, gate)
    head = ["def all_pass(view, values_of):", "    verified = set()"]
    if w.exact:
        w.names["EXACT"] = identity_decimal.EXACT
    lines = head + w.first + w.reads_later + w.usability() + w.later + ["    return verified"]
    return "\n".join(lines) + "\n", w.names


def _compares(gate: Gate) -> bool:
    """Whether the gate's rows are decided in place by comparisons alone (a
    range, an exact integer or domain test, an order without a tolerance),
    which no value can make costly and which call no row predicate: such a
    gate may run before its values are tested for usability."""
    if gate.form == "range":
        return len(gate.inputs) == 1
    if gate.form in ("integer", "finite_domain"):
        return len(gate.inputs) == 1 and not gate.tolerance
    if gate.form == "order":
        return not gate.tolerance and not gate.verifies and (
            gate.chain_list is not None or not any(p.is_list for p in gate.inputs))
    return False


def compile_check(gates: tuple[Gate, ...], special: Callable[[Gate], Callable[[Any], Any] | None]
                  ) -> Callable[[Any, Callable[[Any], Any]], Any]:
    """``all_pass`` for ``gates``, compiled (see :func:`generate`)."""
    source, names = generate(gates, special)
    builtins = {"len": len, "all": all, "map": map, "zip": zip, "set": set, "dict": dict, "list": list,
                "abs": abs, "min": min, "max": max, "int": int, "str": str, "sum": sum}
    namespace = dict(names, __builtins__=builtins)
    exec(compile(source, "<gate all-pass check>", "exec"), namespace)
    check = namespace["all_pass"]
    return _in_exact_context(check) if "EXACT" in names else _declining(check)


# what a comparison raises on a value that is not usable (text against a number, an unhashable list in
# a set, a NaN): the check declines
_DECLINED = (TypeError, AttributeError, ValueError, ArithmeticError)


def _declining(check: Callable[[Any, Callable[[Any], Any]], Any]) -> Callable[[Any, Callable[[Any], Any]], Any]:
    """``check``, declining where a comparison raises on a value that is not usable."""
    def all_pass(view: Any, values_of: Callable[[Any], Any]) -> Any:
        try:
            return check(view, values_of)
        except _DECLINED:
            return None
    return all_pass


def _in_exact_context(check: Callable[[Any, Callable[[Any], Any]], Any]) -> Callable[[Any, Callable[[Any], Any]], Any]:
    """``check`` run with :data:`.identity_decimal.EXACT` as the thread's current
    context (the one the written-out identity sides are exact in), the prior
    one restored after; declining as :func:`_declining`."""
    exact = identity_decimal.EXACT

    def all_pass(view: Any, values_of: Callable[[Any], Any]) -> Any:
        prior = getcontext()
        setcontext(exact)
        try:
            return check(view, values_of)
        except _DECLINED:
            return None
        finally:
            setcontext(prior)
    return all_pass

