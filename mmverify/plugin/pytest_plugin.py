"""pytest plugin (entry point ``pytest11``): contract tests for a benchmark
maintainer's own anchors folder.

Design notes: docs/architecture.md, `mmverify/plugin/pytest_plugin.py`.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT_NAME = "mmverify-anchors"


def pytest_addoption(parser):
    group = parser.getgroup("mmverify", "mmverify anchor contracts")
    group.addoption("--mmverify-anchors", action="store", default=None, metavar="DIR",
                    help="run mmverify's contract tests on the anchors folder DIR")
    parser.addini("mmverify_anchors", "anchors folder for mmverify's contract tests", default="")


def anchors_dir_from(config) -> str | None:
    """The anchors folder asked for: the command-line option (relative to the
    invocation folder), else the ini value (relative to the ini file's folder)."""
    opt = config.getoption("mmverify_anchors", default=None)
    if opt:
        return os.path.abspath(os.path.join(str(config.invocation_params.dir), opt))
    ini = config.getini("mmverify_anchors")
    if ini:
        base = config.inipath.parent if config.inipath else config.rootpath
        return os.path.abspath(os.path.join(str(base), str(ini)))
    return None


def pytest_configure(config):
    folder = anchors_dir_from(config)
    if folder is None:
        return
    if not os.path.isdir(folder):
        raise pytest.UsageError(f"mmverify: anchors folder not found: {folder}")
    config.pluginmanager.register(AnchorContracts(folder), "mmverify-anchor-contracts")


class AnchorContracts:
    """Adds the contract items for one anchors folder to the collected items."""

    def __init__(self, folder: str):
        self.folder = folder

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session, config, items):
        root = AnchorsCollector.from_parent(session, name=ROOT_NAME, nodeid=ROOT_NAME, path=Path(self.folder))
        root.folder = self.folder
        # through the session, so that the items are counted and reported like any other
        items.extend(session.genitems(root))


class AnchorsCollector(pytest.Collector):
    folder: str = ""

    def collect(self):
        from mmverify.tasks import TaskLoadError, load_index

        try:
            entries = load_index(self.folder)
        except TaskLoadError as exc:
            message = f"the anchors index does not load: {exc}"
            yield ContractItem.from_parent(self, name="index", path=Path(self.folder),
                                           check=lambda: _fail(message))
            return
        ids = [e.get("id") if isinstance(e, dict) else None for e in entries]
        if not ids:
            message = f"no task in {self.folder} (no index.json entries, no */task.json)"
            yield ContractItem.from_parent(self, name="index", path=Path(self.folder),
                                           check=lambda: _fail(message))
            return
        for tid in ids:
            if not isinstance(tid, str):
                yield ContractItem.from_parent(self, name="index", path=Path(self.folder),
                                               check=lambda tid=tid: _fail(f"index.json entry without an id: {tid!r}"))
                continue
            node = TaskCollector.from_parent(self, name=tid, path=Path(self.folder) / tid)
            node.folder, node.task_id = self.folder, tid
            yield node


class TaskCollector(pytest.Collector):
    folder: str = ""
    task_id: str = ""

    def collect(self):
        from mmverify.plugin import contracts
        from mmverify.tasks import TaskLoadError, load_task

        task_file = Path(self.folder) / self.task_id / "task.json"
        try:
            task = load_task(self.task_id, self.folder)
        except TaskLoadError as exc:
            message = f"task {self.task_id!r} does not load: {exc}"
            yield ContractItem.from_parent(self, name="loads", path=task_file, check=lambda: _fail(message))
            return
        except Exception as exc:  # a loader crash is a failed contract too, not a collection error
            message = f"task {self.task_id!r}: loader raised {type(exc).__name__}: {exc}"
            yield ContractItem.from_parent(self, name="loads", path=task_file, check=lambda: _fail(message))
            return
        yield ContractItem.from_parent(self, name="loads", path=task_file,
                                       check=lambda: contracts.check_loads(self.task_id, self.folder))
        oracle = Path(task.oracle_path)
        yield ContractItem.from_parent(self, name="oracle_validates", path=oracle,
                                       check=lambda: contracts.check_oracle_validates(task))
        yield ContractItem.from_parent(self, name="gates_pass_on_oracle", path=task_file,
                                       check=lambda: contracts.check_gates_pass_on_oracle(task))
        yield ContractItem.from_parent(self, name="oracle_scores_one", path=oracle,
                                       check=lambda: contracts.check_oracle_scores_one(task))
        for metric in contracts.directional_metrics(task):
            yield ContractItem.from_parent(self, name=f"one_sided[{metric.id}]", path=task_file,
                                           check=lambda m=metric: contracts.check_one_sided(task, m))
        yield ContractItem.from_parent(self, name="selfcheck_no_leak", path=task_file,
                                       check=lambda: contracts.check_selfcheck_no_leak(task))


def _fail(message: str):
    from mmverify.plugin.contracts import ContractFailure

    raise ContractFailure(message)


class ContractItem(pytest.Item):
    def __init__(self, *, check, **kwargs):
        super().__init__(**kwargs)
        self.check = check

    def runtest(self):
        from mmverify.plugin.contracts import ContractSkip

        try:
            self.check()
        except ContractSkip as exc:
            try:  # report the skip at the item, not inside this plugin
                raise pytest.skip.Exception(str(exc), _use_item_location=True) from None
            except TypeError:  # pragma: no cover - pytest without _use_item_location
                pytest.skip(str(exc))

    def repr_failure(self, excinfo, style=None):
        from mmverify.plugin.contracts import ContractFailure

        if isinstance(excinfo.value, ContractFailure):
            return f"mmverify contract {self.name} failed:\n{excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"mmverify contract {self.nodeid}"
