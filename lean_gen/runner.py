"""Finding Lean, checking obligation files in one process, parsing the results.

Design notes: `docs/architecture.md` (this module's section).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence
from mmverify.errors import MmverifyError

ALLOWED_AXIOMS = frozenset({"propext", "Quot.sound"})
PROVED, REFUTED, FAILED, AUDIT_FAILED = "proved", "refuted", "failed_to_elaborate", "audit_failed"
STATUSES = (PROVED, REFUTED, FAILED, AUDIT_FAILED)
DEFAULT_TIMEOUT = 900.0

INSTALL_HINT = (
    "Install Lean 4 with elan (https://github.com/leanprover/elan): "
    "`curl https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh -sSf | sh`; "
    "elan reads LeanProofs/lean-toolchain and installs the pinned version on first use "
    "(`cd LeanProofs && lake env lean --version`). "
    "Or set MMVERIFY_LEAN to the path of a `lean` binary."
)


class LeanNotFound(MmverifyError, RuntimeError):
    """No usable Lean toolchain: ``missing`` says what, ``hint`` how to install it."""

    def __init__(self, missing: str, hint: str = INSTALL_HINT):
        super().__init__(f"no Lean 4 toolchain found: {missing}. {hint}")
        self.missing = missing
        self.hint = hint


class LeanRunError(MmverifyError, RuntimeError):
    """Lean ran but its output could not be interpreted (crash, timeout)."""


def project_dir() -> Path:
    """``$MMVERIFY_LEANPROOFS``, else the ``LeanProofs/`` project shipped inside
    the installed package, else the one beside the sources (a source checkout)."""
    env = os.environ.get("MMVERIFY_LEANPROOFS")
    if env:
        return Path(env)
    from importlib import resources

    bundled = resources.files("mmverify").joinpath("LeanProofs")
    if bundled.is_dir():
        return Path(str(bundled))
    return Path(__file__).resolve().parent.parent / "LeanProofs"


@dataclass(frozen=True)
class Toolchain:
    argv: tuple[str, ...]          # command prefix; the file path is appended
    cwd: str | None
    how: str                       # how it was found

    def version(self, timeout: float = 60.0) -> str:
        try:
            out = subprocess.run(list(self.argv) + ["--version"], cwd=self.cwd, capture_output=True,
                                 text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise LeanNotFound(f"{' '.join(self.argv)} --version failed ({exc})") from None
        text = (out.stdout or out.stderr).strip().splitlines()
        if out.returncode != 0 or not text:
            said = first_line(out.stderr) or first_line(out.stdout) or "no output"
            raise LeanNotFound(f"{' '.join(self.argv)} --version failed (exit {out.returncode}), "
                               f"so it is not a working Lean: it said {said!r}")
        return text[0]


def first_line(text: str | None, width: int = 160) -> str:
    """The first non-empty line of ``text``, shortened at a word boundary
    (with "...") when longer than ``width``; never cut mid-word."""
    for line in (text or "").splitlines():
        line = " ".join(line.split())
        if line:
            if len(line) <= width:
                return line
            cut = line.rfind(" ", 0, width - 3)
            return (line[:cut] if cut > 0 else line[: width - 3]) + "..."
    return ""


def find_lean(env: Mapping[str, str] | None = None) -> Toolchain:
    """The toolchain to use, or :class:`LeanNotFound`."""
    env = os.environ if env is None else env
    explicit = env.get("MMVERIFY_LEAN")
    if explicit:
        if not (os.path.isfile(explicit) and os.access(explicit, os.X_OK)):
            raise LeanNotFound(f"MMVERIFY_LEAN={explicit} is not an executable file")
        return Toolchain((explicit,), None, "MMVERIFY_LEAN")
    path = env.get("PATH", "")
    lake = shutil.which("lake", path=path)
    proj = project_dir()
    if lake and (proj / "lean-toolchain").exists():
        return Toolchain((lake, "env", "lean"), str(proj), "lake env lean (LeanProofs/)")
    lean = shutil.which("lean", path=path)
    if lean:
        return Toolchain((lean,), None, "lean on PATH")
    if lake:
        return Toolchain((lake, "env", "lean"), None, "lake env lean")
    raise LeanNotFound("MMVERIFY_LEAN is not set, and neither `lake` nor `lean` is on PATH")


def lean_available() -> tuple[bool, str]:
    """(available, reason) for test skips and the CLI."""
    try:
        tc = find_lean()
        tc.version()
    except LeanNotFound as exc:
        return False, str(exc)
    return True, tc.how


# ----------------------------------------------------------------- parsing output

_DIAG = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+)(?:-\d+:\d+)?: "
                   r"(?P<sev>error|warning|info|information)(?:\([^)]*\))?: ?(?P<msg>.*)$")
_AXIOMS = re.compile(r"'(?P<name>[^'\s]+)' (?:(?P<none>does not depend on any axioms)"
                     r"|depends on axioms: \[(?P<list>[^\]]*)\])", re.S)
_PARSE_ERROR = re.compile(r"^(unexpected |expected |unknown tactic|unterminated comment|missing end|"
                          r"invalid 'end'|unknown command)", re.I)


@dataclass(frozen=True)
class Diagnostic:
    line: int
    col: int
    severity: str
    message: str

    @property
    def parse_error(self) -> bool:
        return self.severity == "error" and bool(_PARSE_ERROR.match(self.message.strip()))


def parse_diagnostics(output: str, file_name: str) -> list[Diagnostic]:
    """Positioned diagnostics of one file (continuation lines joined)."""
    out: list[Diagnostic] = []
    cur: dict | None = None
    base = os.path.basename(file_name)
    for raw in output.splitlines():
        m = _DIAG.match(raw)
        if m and (m.group("file") == file_name or os.path.basename(m.group("file")) == base):
            if cur:
                out.append(Diagnostic(**cur))
            sev = "info" if m.group("sev") == "information" else m.group("sev")
            cur = dict(line=int(m.group("line")), col=int(m.group("col")), severity=sev, message=m.group("msg"))
        elif cur is not None and not _AXIOMS.search(raw):
            cur["message"] += "\n" + raw
        else:
            if cur:
                out.append(Diagnostic(**cur))
            cur = None
    if cur:
        out.append(Diagnostic(**cur))
    return out


def parse_axioms(output: str) -> dict[str, tuple[str, ...]]:
    """Declaration name -> axioms it depends on (``()`` for none)."""
    out: dict[str, tuple[str, ...]] = {}
    for m in _AXIOMS.finditer(output):
        name = m.group("name").replace("«", "").replace("»", "")
        if m.group("none"):
            out[name] = ()
        else:
            items = [x.strip().replace("«", "").replace("»", "") for x in m.group("list").split(",")]
            out[name] = tuple(x for x in items if x)
    return out


# ---------------------------------------------------------------- file structure

_CMD = re.compile(r"^(?:(?:private |protected |noncomputable )*(theorem|lemma|def|axiom|example|instance|abbrev)"
                  r"\s+([^\s:(]+)?|(#print axioms)\s+(\S+)|(namespace)\s+(\S+)|(end)\b\s*(\S*)|(/--?)|(#\w+)"
                  r"|(set_option|open|section|variable|attribute|@\[))")


@dataclass
class Decl:
    name: str                      # full name, namespace included
    kind: str                      # theorem / axiom / ...
    line: int                      # 1-based line of the keyword
    first: int                     # first line of its span (docstring included)
    last: int                      # last line of its span
    print_line: int | None = None  # line of its '#print axioms'
    statement: str = ""


def scan(text: str) -> tuple[list[Decl], dict[int, str]]:
    """The declarations of a file and a map ``line -> decl`` owning that line."""
    lines = text.split("\n")
    decls: list[Decl] = []
    by_name: dict[str, Decl] = {}
    ns: list[str] = []
    doc_start: int | None = None
    in_comment = 0
    starts: list[int] = []
    for idx, line in enumerate(lines, start=1):
        if in_comment:
            in_comment += line.count("/-") - line.count("-/")
            continue
        m = _CMD.match(line)
        if not m:
            continue
        if m.group(9):  # a comment opens
            starts.append(idx)
            depth = line.count("/-") - line.count("-/")
            if m.group(9) == "/--":
                doc_start = idx
            if depth > 0:
                in_comment = depth
            continue
        starts.append(idx)
        if m.group(1):
            short = m.group(2) or f"_anon_{idx}"
            full = ".".join(ns + [short])
            first = doc_start if doc_start is not None else idx
            stmt = ""
            sm = re.match(r"^\S+\s+\S+\s*:\s*(.*?)\s*:=", line)
            if sm:
                stmt = sm.group(1)
            d = Decl(full, m.group(1), idx, first, idx, statement=stmt)
            decls.append(d)
            by_name[full] = d
        elif m.group(3):
            target = m.group(4)
            full = ".".join(ns + [target])
            d = by_name.get(full) or by_name.get(target)
            if d is not None:
                d.print_line = idx
        elif m.group(5):
            ns.append(m.group(6))
        elif m.group(7):
            if ns:
                ns.pop()
        doc_start = None
    # spans: a declaration owns its lines up to the next command
    owner: dict[int, str] = {}
    starts = sorted(set(starts))
    for d in decls:
        nxt = [s for s in starts if s > d.line]
        d.last = (nxt[0] - 1) if nxt else len(lines)
        for ln in range(d.first, d.last + 1):
            owner[ln] = d.name
    return decls, owner


# ------------------------------------------------------------------------ results


@dataclass(frozen=True)
class DeclResult:
    name: str
    status: str
    negated: bool
    axioms: tuple[str, ...] | None
    errors: tuple[str, ...] = ()
    parse_error: bool = False

    @property
    def accepted(self) -> bool:
        return self.status in (PROVED, REFUTED)

    def as_dict(self) -> dict:
        return {"name": self.name, "status": self.status, "negated": self.negated,
                "axioms": list(self.axioms) if self.axioms is not None else None,
                "errors": list(self.errors), "parse_error": self.parse_error}


@dataclass(frozen=True)
class RunResult:
    results: dict[str, DeclResult]
    version: str
    how: str
    seconds: float
    returncode: int
    stray_errors: tuple[str, ...] = ()   # errors outside every declaration
    output: str = field(default="", repr=False)
    cpu_seconds: float = 0.0             # CPU time of the Lean process(es), user + system

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in STATUSES}
        for r in self.results.values():
            out[r.status] += 1
        return out


def is_negated(statement: str) -> bool:
    """Whether a statement is ``¬ (…)`` as a whole."""
    s = statement.strip()
    if not s.startswith("¬"):
        return False
    rest = s[1:].strip()
    if not rest.startswith("("):
        return True
    depth = 0
    for i, ch in enumerate(rest):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i == len(rest) - 1
    return False


def interpret(text: str, output: str, file_name: str, theorems_only: bool = True
              ) -> tuple[dict[str, DeclResult], tuple[str, ...]]:
    decls, owner = scan(text)
    diags = parse_diagnostics(output, file_name)
    axioms = parse_axioms(output)
    errors: dict[str, list[Diagnostic]] = {d.name: [] for d in decls}
    print_owner = {d.print_line: d.name for d in decls if d.print_line}
    stray: list[str] = []
    for dg in diags:
        if dg.severity != "error":
            continue
        name = print_owner.get(dg.line) or owner.get(dg.line)
        if name is None:
            stray.append(f"line {dg.line}: {dg.message.strip()}")
        else:
            errors[name].append(dg)
    results: dict[str, DeclResult] = {}
    for d in decls:
        if theorems_only and d.kind not in ("theorem", "lemma"):
            continue
        neg = is_negated(d.statement)
        errs = errors[d.name]
        ax = axioms.get(d.name)
        if errs:
            status = FAILED
        elif ax is None or not set(ax) <= ALLOWED_AXIOMS:
            status = AUDIT_FAILED
        else:
            status = REFUTED if neg else PROVED
        results[d.name] = DeclResult(d.name, status, neg, ax,
                                     tuple(e.message.strip() for e in errs),
                                     any(e.parse_error for e in errs))
    return results, tuple(stray)


def _children_cpu() -> float:
    try:
        import resource

        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime
    except (ImportError, OSError):  # pragma: no cover - non-POSIX
        return 0.0


def run_lean(text: str, toolchain: Toolchain | None = None, timeout: float = DEFAULT_TIMEOUT,
             file_stem: str = "MMVerifyCheck") -> tuple[str, int, float, str]:
    """Run Lean once on ``text``: (output, returncode, wall seconds, file name used)."""
    toolchain = toolchain or find_lean()
    with tempfile.TemporaryDirectory(prefix="mmverify-lean-") as tmp:
        path = os.path.join(tmp, f"{file_stem}.lean")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(list(toolchain.argv) + [path], cwd=toolchain.cwd, capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise LeanRunError(f"Lean did not finish within {timeout:.0f} s") from None
        except OSError as exc:
            raise LeanNotFound(f"cannot run {' '.join(toolchain.argv)}: {exc}") from None
        seconds = time.perf_counter() - t0
    return (proc.stdout or "") + (proc.stderr or ""), proc.returncode, seconds, path


def check_text(text: str, toolchain: Toolchain | None = None, timeout: float = DEFAULT_TIMEOUT,
               version: str | None = None) -> RunResult:
    """Check one Lean text; one result per theorem, by full name."""
    toolchain = toolchain or find_lean()
    version = version or toolchain.version()
    cpu0 = _children_cpu()
    output, rc, seconds, path = run_lean(text, toolchain, timeout)
    cpu = _children_cpu() - cpu0
    results, stray = interpret(text, output, path)
    if rc != 0 and not any(r.errors for r in results.values()) and not stray:
        raise LeanRunError(f"Lean exited with {rc} and no diagnostics: {output.strip()[:500]}")
    return RunResult(results, version, toolchain.how, seconds, rc, stray, output, cpu)


def combine(texts: Sequence[str]) -> str:
    """One file from several obligation files (each keeps its namespace)."""
    return "\n".join(t if t.endswith("\n") else t + "\n" for t in texts)


def check_files(texts: Iterable[str], toolchain: Toolchain | None = None,
                timeout: float = DEFAULT_TIMEOUT, jobs: int = 1) -> RunResult:
    """Check many obligation files: ONE Lean process per batch. With ``jobs > 1``
    the files are split into that many batches (balanced by size, file order
    kept inside each) that run side by side; results are merged by name."""
    texts = list(texts)
    combined = combine(texts)
    decls, _ = scan(combined)
    names = [d.name for d in decls]
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"declaration names repeat across the batch: {dupes[:5]}")
    toolchain = toolchain or find_lean()
    jobs = max(1, min(jobs, len(texts)))
    if jobs == 1:
        return check_text(combined, toolchain, timeout)
    version = toolchain.version()
    batches: list[list[str]] = [[] for _ in range(jobs)]
    sizes = [0] * jobs
    for t in sorted(texts, key=len, reverse=True):
        k = sizes.index(min(sizes))
        batches[k].append(t)
        sizes[k] += len(t)
    from concurrent.futures import ThreadPoolExecutor

    t0, cpu0 = time.perf_counter(), _children_cpu()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        parts = list(pool.map(lambda b: check_text(combine(b), toolchain, timeout, version), batches))
    results: dict[str, DeclResult] = {}
    for part in parts:
        results.update(part.results)
    return RunResult(results, version, toolchain.how, time.perf_counter() - t0,
                     max(p.returncode for p in parts), tuple(e for p in parts for e in p.stray_errors),
                     "".join(p.output for p in parts), _children_cpu() - cpu0)
