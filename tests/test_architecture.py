"""The shape of the package (docs/architecture.md): no import cycle between
modules, a small top folder, and the moved module paths kept for one release
while nothing in the repository uses them any more."""
from __future__ import annotations

import ast
import importlib
import os
import re
import sys
import warnings
from pathlib import Path

import pytest

from mmverify._oldpaths import MOVED

REPO = Path(__file__).resolve().parents[1]
# source folder -> its import name (setup.py maps the code folders into mmverify)
FOLDERS = {"mmverify": "mmverify", "scoring": "mmverify.scoring", "gates": "mmverify.gates",
           "lean_gen": "mmverify.lean_gen", "replay": "mmverify.replay"}
TOP_MODULES_MAX = 15


def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__) of every module of the code folders."""
    out = {}
    for folder, prefix in FOLDERS.items():
        root = REPO / folder
        for file in sorted(root.rglob("*.py")):
            rel = file.relative_to(root).with_suffix("").parts
            if "__pycache__" in rel:
                continue
            package = rel[-1] == "__init__"
            out[".".join((prefix,) + (rel[:-1] if package else rel))] = (file, package)
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def module_level_imports(body: list[ast.stmt]):
    """The import statements run when the module is imported: at module level,
    in its ``if``/``try``/``with`` blocks; not in functions or classes, and not
    under ``if TYPE_CHECKING:``."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from module_level_imports(node.body)
            yield from module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from module_level_imports(block)
        elif isinstance(node, ast.With):
            yield from module_level_imports(node.body)


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the code folders it imports at module level.
    ``from package import name`` depends on the submodule ``package.name`` when
    there is one, else on the package (its ``__init__``)."""
    mods = modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for name, (file, package) in mods.items():
        here = name if package else name.rpartition(".")[0]
        for node in module_level_imports(ast.parse(file.read_text("utf-8")).body):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = here.split(".")[: len(here.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in mods else source for a in node.names]
            graph[name].update(t for t in targets if t in mods and t != name)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as [a, b, ..., a], or None."""
    state: dict[str, int] = {}      # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_graph_reads_every_code_folder():
    graph = import_graph()
    assert {"mmverify.pipeline.evaluate", "mmverify.gates.registry", "mmverify.scoring.panel",
            "mmverify.lean_gen.emit", "mmverify.replay.base"} <= set(graph)
    assert "mmverify.gates.registry" in graph["mmverify.gates.compile"]
    assert "mmverify.reading.artifact" in graph["mmverify.pipeline.evaluate"]


def test_the_cycle_finder_finds_and_names_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    tree = ast.parse("import x\nif TYPE_CHECKING:\n    import y\ndef f():\n    import z\ntry:\n    import w\n"
                     "except ImportError:\n    pass\n")
    assert [n.names[0].name for n in module_level_imports(tree.body)] == ["x", "w"]


def test_no_import_cycle_between_modules():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_top_folder_is_small():
    top = sorted(p.name for p in (REPO / "mmverify").glob("*.py"))
    assert len(top) <= TOP_MODULES_MAX, top


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_imports_the_new_module_with_a_warning(old):
    new = importlib.import_module(MOVED[old])
    sys.modules.pop(old, None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
        again = importlib.import_module(old)
    assert module is new and again is new
    assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
        f"{old} is deprecated and will be removed in the next release; import {MOVED[old]}"]


def test_from_mmverify_import_an_old_module_name():
    import mmverify

    sys.modules.pop("mmverify.numbers", None)
    vars(mmverify).pop("numbers", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        from mmverify import numbers
    assert numbers is importlib.import_module("mmverify.reading.numbers")


# every file that could name a module path (the CHANGELOG keeps history; the
# table of old paths names them on purpose)
SKIP_DIRS = {".git", ".venv", "__pycache__", "LeanProofs", ".lake", ".hypothesis", "node_modules"}
SKIP_FILES = {"CHANGELOG.md", "mmverify/_oldpaths.py", "tests/test_architecture.py"}
OLD = re.compile(r"\bmmverify\.(" + "|".join(sorted((o.split(".")[1] for o in MOVED), key=len, reverse=True))
                 + r")\b(?![/-])"
                 + r"|^\s*from mmverify import [^\n]*\b(" + "|".join(o.split(".")[1] for o in MOVED) + r")\b", re.M)


def test_nothing_in_the_repository_uses_an_old_path():
    found = []
    for here, dirs, files in os.walk(REPO):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info")]
        for name in files:
            file = Path(here) / name
            rel = file.relative_to(REPO).as_posix()
            if rel in SKIP_FILES or not name.endswith((".py", ".md", ".toml", ".txt", ".cfg")) and name != "run":
                continue
            text = file.read_text("utf-8", errors="replace")
            found += [f"{rel}: {m.group(0).strip()}" for m in OLD.finditer(text)]
    assert not found, "\n".join(found)


def test_every_code_folder_is_a_package():
    # the build discovers packages by their __init__.py: a folder without one
    # would import from a checkout and be left out of a wheel
    bare = sorted(str(p.relative_to(REPO)) for folder in FOLDERS for p in (REPO / folder).rglob("*")
                  if p.is_dir() and p.name != "__pycache__" and any(p.glob("*.py")) and not (p / "__init__.py").exists())
    assert not bare, bare
