"""pytest plugin (entry point ``pytest11``): contract tests for a benchmark
maintainer's own anchors folder.

Nothing happens unless ``--mmverify-anchors DIR`` is given (or the ini option
``mmverify_anchors`` is set), so installing mmverify never changes anybody
else's test run.
"""
from __future__ import annotations


def pytest_addoption(parser):
    group = parser.getgroup("mmverify", "mmverify anchor contracts")
    group.addoption("--mmverify-anchors", action="store", default=None, metavar="DIR",
                    help="run mmverify's contract tests on the anchors folder DIR")
    parser.addini("mmverify_anchors", "anchors folder for mmverify's contract tests", default="")
