"""The mutation suite: proof that the checking pipeline cannot be fooled.

Design notes: `docs/architecture.md` (this module's section).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from . import syntax
from .syntax import Lit, Prop, Rel

MUTANT_AXIOM = "mm_mutant_axiom"
KERNEL, AUDIT = "kernel", "audit"
KILLED, STILLBORN, SURVIVED = "killed", "stillborn", "survived"

_THEOREM = re.compile(r"^theorem ([A-Za-z_][A-Za-z0-9_]*) : (.+) := by decide$")
_FORM = re.compile(r"^/-- gate \S+ \((\w+), level")


@dataclass(frozen=True)
class Site:
    """One theorem of a file: where it is, its statement and the gate form."""

    line_no: int          # 0-based index of the theorem line
    name: str
    statement: Prop
    form: str | None


def theorems(text: str) -> list[Site]:
    lines = text.split("\n")
    out = []
    form = None
    for i, line in enumerate(lines):
        fm = _FORM.match(line)
        if fm:
            form = fm.group(1)
        m = _THEOREM.match(line)
        if m:
            try:
                stmt = syntax.parse_prop(m.group(2))
            except syntax.ParseError:
                form = None
                continue
            out.append(Site(i, m.group(1), stmt, form))
            form = None
    return out


@dataclass(frozen=True)
class Mutant:
    operator: str
    target: str           # short theorem name
    text: str             # the whole mutated file
    before: str           # the original theorem line
    after: str            # the mutated line(s)
    expect: str           # KERNEL or AUDIT: which layer must reject it
    label: str = ""       # which file


def _replace_line(text: str, line_no: int, new_lines: Sequence[str]) -> str:
    lines = text.split("\n")
    return "\n".join(lines[:line_no] + list(new_lines) + lines[line_no + 1:])


# ------------------------------------------------------------- AST rewriting

Path = tuple  # a path of child indices into a Prop/Term tree


def _children(node) -> list:
    if isinstance(node, Rel):
        return [node.left, node.right]
    if isinstance(node, syntax.Not):
        return [node.body]
    if isinstance(node, (syntax.And, syntax.Or)):
        return list(node.parts)
    if isinstance(node, syntax.Add):
        return list(node.terms)
    if isinstance(node, syntax.Mul):
        return list(node.factors)
    if isinstance(node, syntax.Sub):
        return [node.left, node.right]
    return []


def _rebuild(node, kids: list):
    if isinstance(node, Rel):
        return Rel(node.op, kids[0], kids[1])
    if isinstance(node, syntax.Not):
        return syntax.Not(kids[0])
    if isinstance(node, syntax.And):
        return syntax.And(tuple(kids))
    if isinstance(node, syntax.Or):
        return syntax.Or(tuple(kids))
    if isinstance(node, syntax.Add):
        return syntax.Add(tuple(kids))
    if isinstance(node, syntax.Mul):
        return syntax.Mul(tuple(kids))
    if isinstance(node, syntax.Sub):
        return syntax.Sub(kids[0], kids[1])
    return node


def walk(node, path: Path = ()) -> Iterator[tuple[Path, object]]:
    yield path, node
    for i, k in enumerate(_children(node)):
        yield from walk(k, path + (i,))


def replace_at(node, path: Path, new):
    if not path:
        return new
    kids = _children(node)
    kids[path[0]] = replace_at(kids[path[0]], path[1:], new)
    return _rebuild(node, kids)


def get_at(node, path: Path):
    for i in path:
        node = _children(node)[i]
    return node


# ------------------------------------------------------------------ operators


@dataclass(frozen=True)
class Operator:
    name: str
    summary: str
    expect: str
    example: tuple[str, str]     # (statement before, statement after)
    mutate: Callable[[Site], list[Prop]] | None = None   # statement mutants, in site order
    proof: Callable[[Site, str], list[str]] | None = None  # replacement lines (proof mutants)

    def candidates(self, site: Site) -> list[Prop]:
        return self.mutate(site) if self.mutate else []


def _flip(site: Site) -> list[Prop]:
    out = []
    for path, node in walk(site.statement):
        if isinstance(node, Rel):
            new = {"≤": Rel("<", node.right, node.left), "<": Rel("≤", node.right, node.left),
                   "=": Rel("<", node.left, node.right)}[node.op]
            out.append(replace_at(site.statement, path, new))
    return out


def _swap(site: Site) -> list[Prop]:
    return [replace_at(site.statement, path, Rel(node.op, node.right, node.left))
            for path, node in walk(site.statement) if isinstance(node, Rel)]


def _shift(site: Site) -> list[Prop]:
    out = []
    for path, node in walk(site.statement):
        if not isinstance(node, Rel):
            continue
        l, r = node.left, node.right
        # the literal on the larger side moves down across the bound, then the other way
        if isinstance(r, Lit):
            v = syntax.eval_term(l) - (1 if node.op == "≤" else 0) if node.op != "=" else syntax.eval_term(l) + 1
            if r.ty == syntax.INT or v >= 0:
                out.append(replace_at(site.statement, path + (1,), Lit(v, r.ty)))
        if isinstance(l, Lit):
            v = syntax.eval_term(r) + (1 if node.op in ("≤", "=") else 0)
            out.append(replace_at(site.statement, path + (0,), Lit(v, l.ty)))
    return out


def _drop_scale(site: Site) -> list[Prop]:
    out = []
    for path, node in walk(site.statement):
        if isinstance(node, syntax.Mul):
            for i, f in enumerate(node.factors):
                if isinstance(f, Lit) and f.value >= 10 and _power_of_ten(f.value):
                    rest = node.factors[:i] + node.factors[i + 1:]
                    out.append(replace_at(site.statement, path, syntax.product(list(rest))))
    return out


def _power_of_ten(v: int) -> bool:
    while v % 10 == 0 and v > 1:
        v //= 10
    return v == 1


def _partition_total(site: Site) -> list[Prop]:
    if site.form != "partition_sum":
        return []
    out = []
    rels = [(p, n) for p, n in walk(site.statement) if isinstance(n, Rel)]
    totals = []
    for _, n in rels:
        for side, other in ((n.right, n.left), (n.left, n.right)):
            if isinstance(side, Lit) and side.value not in [t for t, _ in totals]:
                totals.append((side.value, syntax.eval_term(other)))
    for t, other_value in totals:
        for new in (t + 1, t - 1, other_value, other_value + 1):
            if new == t or new < 0:
                continue
            stmt = site.statement
            for path, node in list(walk(stmt)):
                if isinstance(node, Lit) and node.value == t and _is_total_position(stmt, path):
                    stmt = replace_at(stmt, path, Lit(new, node.ty))
            out.append(stmt)
    return out


def _is_total_position(stmt: Prop, path: Path) -> bool:
    """A literal that is a whole relation side, or the first summand of a 2-term side."""
    parent = get_at(stmt, path[:-1]) if path else None
    if isinstance(parent, Rel):
        return True
    if isinstance(parent, syntax.Add) and path[-1] == 0 and len(parent.terms) == 2:
        grand = get_at(stmt, path[:-2])
        return isinstance(grand, Rel)
    return False


def _remove_member(site: Site) -> list[Prop]:
    if site.form != "finite_domain" or not isinstance(site.statement, syntax.Or):
        return []
    out = []
    parts = site.statement.parts
    for i, p in enumerate(parts):
        if syntax.eval_prop(p):
            rest = parts[:i] + parts[i + 1:]
            if rest:
                out.append(syntax.disj(list(rest)))
    return out


def _negate(site: Site) -> list[Prop]:
    return [] if isinstance(site.statement, syntax.Not) else [syntax.Not(site.statement)]


def _unnegate(site: Site) -> list[Prop]:
    return [site.statement.body] if isinstance(site.statement, syntax.Not) else []


def _sorry(site: Site, spelling: str) -> list[str]:
    return [f"theorem {site.name} : {syntax.print_prop(site.statement)} := sorry"]


def _native(site: Site, spelling: str) -> list[str]:
    return [f"theorem {site.name} : {syntax.print_prop(site.statement)} := by {spelling}"]


def _axiom(site: Site, spelling: str) -> list[str]:
    false_stmt = syntax.Not(site.statement)
    return [f"axiom {MUTANT_AXIOM} : False",
            f"theorem {site.name} : {syntax.print_prop(false_stmt)} := False.elim {MUTANT_AXIOM}"]


OPERATORS: tuple[Operator, ...] = (
    Operator("flip_relation", "reverse a relation: a ≤ b becomes b < a (a < b: b ≤ a; a = b: a < b)", KERNEL,
             ("1246266 * 1604793 ≤ 2 * 1000000 * 1000000", "2 * 1000000 * 1000000 < 1246266 * 1604793"),
             mutate=_flip),
    Operator("shift_literal", "move a scaled literal one unit across the bound", KERNEL,
             ("30 ≤ 40", "30 ≤ 29"), mutate=_shift),
    Operator("drop_scale_factor", "drop one 10^d scale factor from a product", KERNEL,
             ("1246266 * 1604793 ≤ 2 * 1000000 * 1000000", "1246266 * 1604793 ≤ 2 * 1000000"),
             mutate=_drop_scale),
    Operator("swap_operands", "swap the two sides of a relation", KERNEL,
             ("30 ≤ 40", "40 ≤ 30"), mutate=_swap),
    Operator("change_partition_total", "change the total of a partition sum", KERNEL,
             ("25 + 75 = 100", "25 + 75 = 101"), mutate=_partition_total),
    Operator("remove_domain_member", "remove the matching member from a finite domain", KERNEL,
             ("2 = 1 ∨ 2 = 2 ∨ 2 = 3", "2 = 1 ∨ 2 = 3"), mutate=_remove_member),
    Operator("negate_true_statement", "state the negation of a true claim", KERNEL,
             ("30 ≤ 40", "¬ (30 ≤ 40)"), mutate=_negate),
    Operator("unnegate_violation", "drop the ¬ of a confirmed violation (the infeasible value 'passes')", KERNEL,
             ("¬ (1406276 * 1604793 ≤ 2 * 1000000 * 1000000)", "1406276 * 1604793 ≤ 2 * 1000000 * 1000000"),
             mutate=_unnegate),
    Operator("proof_sorry", "replace the proof by sorry", AUDIT,
             (":= by decide", ":= sorry"), proof=_sorry),
    Operator("proof_native_decide", "replace the proof by native_decide (nativeDecide before 2022)", AUDIT,
             (":= by decide", ":= by native_decide"), proof=_native),
    Operator("axiom_proof", "add `axiom … : False` and prove the (false) negation with it", AUDIT,
             (":= by decide", f"axiom {MUTANT_AXIOM} : False … := False.elim {MUTANT_AXIOM}"), proof=_axiom),
)


# ------------------------------------------------------------ value mutants
# One per gate form: the ARTIFACT changes (one value, through the gate layer and
# the IR, see .falsify), the file keeps the gate's old verdict. The theorem is
# then false and the kernel must reject it.

VALUE_FORMS = ("range", "integer", "order", "identity", "finite_domain", "partition_sum")


def value_operator_name(form: str) -> str:
    return f"value_{form}"


VALUE_OPERATORS: tuple[Operator, ...] = tuple(
    Operator(value_operator_name(f), f"change one artifact value so that its {f} gate fails; "
             "the file keeps the old verdict", KERNEL, ex)
    for f, ex in (
        ("range", ("0 ≤ 536230167 ∧ 536230167 ≤ 1000000000", "0 ≤ 1000000001 ∧ 1000000001 ≤ 1000000000")),
        ("integer", ("17450 % 10 = 0", "17448 % 10 = 0")),
        ("order", ("6 ≤ 6", "7 ≤ 6")),
        ("identity", ("224 = 223 + 1", "222 = 223 + 1")),
        ("finite_domain", ("10 = 10 ∨ 10 = 15", "8 = 10 ∨ 8 = 15")),
        ("partition_sum", ("103 + 62 + 34 = 199", "101 + 62 + 34 = 199")),
    ))


def value_mutants(files: Sequence, anchors_dir: str | None = None,
                  forms: Sequence[str] = VALUE_FORMS) -> list:
    """For each form, a :class:`Mutant` from the first oracle file (file order)
    where a single artifact value flips an obligation of that form; the
    operator's name alone when there is none."""
    from mmverify.reading.artifact import parse_file
    from mmverify.tasks import default_anchors_dir, load_task

    from . import falsify

    anchors_dir = anchors_dir or default_anchors_dir()

    found: dict[str, Mutant] = {}
    for f in files:
        if f.oset.artifact != "oracle artifact" or len(found) == len(forms):
            continue
        todo = [form for form in forms if form not in found]
        if not any(o.form in todo for o in f.oset.obligations):
            continue
        task = load_task(f.oset.task_id, anchors_dir)
        data = parse_file(task.oracle_path).data
        for form, m in falsify.per_form(task, data, f.oset.obligations, todo).items():
            if m is None:
                continue
            lines = f.text.split("\n")
            head = f"theorem {m.obligation.name} : "
            k = next(i for i, line in enumerate(lines) if line.startswith(head))
            after = f"{head}{syntax.print_prop(m.false_statement)} := by decide"
            found[form] = Mutant(value_operator_name(form), m.obligation.name,
                                 _replace_line(f.text, k, [after]), lines[k], after, KERNEL,
                                 f"{f.relpath} ({m.path}: {m.before} -> {m.after}, gate {m.verdict})")
    return [found[form] if form in found else (value_operator_name(form), None) for form in forms]


def operator(name: str) -> Operator:
    for op in OPERATORS:
        if op.name == name:
            return op
    raise KeyError(name)


def apply(op: Operator, text: str, label: str = "", spelling: str = "native_decide") -> Mutant | None:
    """The first mutant of ``op`` on ``text`` (None when the operator does not apply)."""
    lines = text.split("\n")
    for site in theorems(text):
        before = lines[site.line_no]
        if op.proof is not None:
            new_lines = op.proof(site, spelling)
        else:
            new_lines = None
            for cand in op.candidates(site):
                if cand == site.statement:
                    continue
                if not syntax.eval_prop(cand):
                    new_lines = [f"theorem {site.name} : {syntax.print_prop(cand)} := by decide"]
                    break
            if new_lines is None:
                continue
        return Mutant(op.name, site.name, _replace_line(text, site.line_no, new_lines), before,
                      "\n".join(new_lines), op.expect, label)
    return None


def mutants(texts: Sequence[tuple[str, str]], spelling: str = "native_decide",
            operators: Sequence[Operator] = OPERATORS) -> list[Mutant | tuple[str, None]]:
    """For each operator, its first mutant over the files (label, text) in order."""
    out: list = []
    for op in operators:
        found = None
        for label, text in texts:
            found = apply(op, text, label, spelling)
            if found:
                break
        out.append(found if found else (op.name, None))
    return out
