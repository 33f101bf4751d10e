"""The import paths of the modules that moved into subpackages (CHANGELOG,
"Structure"): for one release each old path still imports, as the module at
its new path, with one DeprecationWarning per process.
"""
from __future__ import annotations

import sys

# old path -> new path
MOVED = {
    **{f"mmverify.{m}": f"mmverify.reading.{m}"
       for m in ("artifact", "digest", "jsonstrict", "labels", "numbers", "pathcode", "paths")},
    **{f"mmverify.{m}": f"mmverify.tasks.{m}" for m in ("cache", "scaffold")},
    **{f"mmverify.{m}": f"mmverify.pipeline.{m}"
       for m in ("evaluate", "precheck", "precheck_runtime", "report", "statuses", "timecap", "validate",
                 "violations")},
    **{f"mmverify.{m}": f"mmverify.render.{m}" for m in ("htmlpage", "report_html", "tables")},
    **{f"mmverify.{m}": f"mmverify.batch.{m}" for m in ("atomic", "engine", "executors", "manifest", "manifest_rows")},
}


class OldPathFinder:
    """A meta path finder for the old paths only: it loads each as an alias of
    the module at the new path (one module object under both names)."""

    def find_spec(self, name, path=None, target=None):
        if name not in MOVED:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module) -> None:
        import importlib
        import warnings

        old = module.__name__
        new = MOVED[old]
        warnings.warn(f"{old} is deprecated and will be removed in the next release; import {new}",
                      DeprecationWarning, stacklevel=2)
        # the import statement returns what sys.modules holds under the old name
        sys.modules[old] = importlib.import_module(new)


def install() -> None:
    """Put the finder last on ``sys.meta_path`` (once): every real module is found first."""
    if not any(isinstance(f, OldPathFinder) for f in sys.meta_path):
        sys.meta_path.append(OldPathFinder())
