"""A well-formedness checker for generated obligation files, independent of Lean.

Design notes: `docs/architecture.md` (this module's section).
"""
from __future__ import annotations

import re

from . import syntax
from mmverify.errors import MmverifyError

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
FORBIDDEN = ("sorry", "native_decide", "nativeDecide", "axiom", "import", "#eval", "set_option", "admit",
             "unsafe", "implemented_by", "extern", "opaque", "macro", "syntax", "elab", "instance", "def",
             "@[", "open", "variable", "omega", "norm_num", "simp", "rfl", "Classical", "ofReduceBool",
             "#exit", "attribute", "local", "notation", "infix")
_THEOREM = re.compile(r"^theorem ([A-Za-z_][A-Za-z0-9_]*) : (.+) := by decide$")
_PRINT = re.compile(r"^#print axioms ([A-Za-z_][A-Za-z0-9_]*)$")


class NotWellFormed(MmverifyError, ValueError):
    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems[:5]) + (f" (+{len(problems) - 5} more)" if len(problems) > 5 else ""))
        self.problems = problems


def comment_balance(text: str) -> list[str]:
    """Problems with block comments: unbalanced, or nested (we never nest)."""
    problems = []
    depth, i, line = 0, 0, 1
    while i < len(text):
        two = text[i:i + 2]
        if text[i] == "\n":
            line += 1
        if two == "/-":
            depth += 1
            if depth > 1:
                problems.append(f"line {line}: nested comment opener")
            i += 2
            continue
        if two == "-/":
            if depth == 0:
                problems.append(f"line {line}: comment closer outside a comment")
            else:
                depth -= 1
            i += 2
            continue
        i += 1
    if depth:
        problems.append("unterminated block comment")
    return problems


def check(text: str) -> list[str]:
    """Every problem found (empty list: well-formed)."""
    problems = comment_balance(text)
    if problems:
        return problems
    if not text.endswith("\n") or text.endswith("\n\n"):
        problems.append("file must end with exactly one newline")
    lines = text.split("\n")[:-1]
    i = 0

    def at(k: int) -> str:
        return lines[k] if k < len(lines) else ""

    # header comment
    if at(0) != "/-":
        return ["line 1: the file must open with the header comment '/-'"]
    while i < len(lines) and lines[i] != "-/":
        i += 1
    if i >= len(lines):
        return ["header comment not closed"]
    i += 1
    while at(i) == "" and i < len(lines):
        i += 1
    m = re.fullmatch(r"namespace ([A-Za-z_][A-Za-z0-9_]*)", at(i))
    if not m:
        return [f"line {i + 1}: expected 'namespace <Ident>'"]
    ns = m.group(1)
    i += 1
    names: set[str] = set()
    count = 0
    while i < len(lines):
        line = lines[i]
        if line == "":
            i += 1
            continue
        if line.startswith("end "):
            if line != f"end {ns}":
                problems.append(f"line {i + 1}: 'end' does not close namespace {ns}")
            i += 1
            break
        if not line.startswith("/-- "):
            problems.append(f"line {i + 1}: expected a docstring '/-- ...' before a theorem")
            i += 1
            continue
        # docstring: until a line ending with ' -/'
        j = i
        while j < len(lines) and not lines[j].endswith(" -/"):
            j += 1
        if j >= len(lines):
            problems.append(f"line {i + 1}: docstring not closed")
            break
        i = j + 1
        tm = _THEOREM.fullmatch(at(i))
        if not tm:
            problems.append(f"line {i + 1}: expected 'theorem <ident> : <statement> := by decide'")
            i += 1
            continue
        name, stmt = tm.group(1), tm.group(2)
        count += 1
        if name in names:
            problems.append(f"line {i + 1}: duplicate theorem name {name}")
        names.add(name)
        problems += [f"line {i + 1}: {p}" for p in check_statement(stmt)]
        pm = _PRINT.fullmatch(at(i + 1))
        if not pm or pm.group(1) != name:
            problems.append(f"line {i + 2}: expected '#print axioms {name}' after the theorem")
        i += 2
    else:
        problems.append(f"namespace {ns} is not closed with 'end {ns}'")
    for k in range(i, len(lines)):
        if lines[k].strip():
            problems.append(f"line {k + 1}: text after the end of the namespace")
            break
    problems += forbidden_words(text)
    return problems


def check_statement(stmt: str) -> list[str]:
    try:
        prop = syntax.parse_prop(stmt)
    except syntax.ParseError as exc:
        return [f"statement outside the subset: {exc}"]
    out = []
    if syntax.print_prop(prop) != stmt:
        out.append("statement is not in canonical form")
    out += syntax.check_types(prop)
    return out


def code_text(text: str) -> str:
    """The text with every block comment removed (comments cannot nest here)."""
    return re.sub(r"/-.*?-/", " ", text, flags=re.S)


def forbidden_words(text: str) -> list[str]:
    code = code_text(text)
    out = []
    for word in FORBIDDEN:
        pattern = re.escape(word) if not word[0].isalpha() else r"(?<![A-Za-z0-9_])" + re.escape(word) + r"(?![A-Za-z0-9_])"
        if re.search(pattern, code):
            out.append(f"forbidden word {word!r} outside comments")
    return out


def assert_wellformed(text: str) -> None:
    problems = check(text)
    if problems:
        raise NotWellFormed(problems)
