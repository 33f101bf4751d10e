"""mmverify: verification-centric scoring of mathematical-modelling answers.

The public API is what ``__all__`` lists (see ``docs/api.md``); everything
else is internal and may change. Names are loaded on first use, so
``import mmverify`` stays cheap (no sympy, numpy or jsonschema at import).
"""
__version__ = "0.1.0"

from mmverify import _oldpaths

_oldpaths.install()     # the module paths that moved keep importing for one release (with a warning)

__all__ = [
    # scoring
    "score_path", "score_artifact", "Report", "reward", "reward_batch",
    # reading
    "parse_file", "parse_bytes", "from_python", "Artifact", "load_task", "TaskSpec",
    # agent-side
    "self_check",
    # errors: one root, specific types
    "MmverifyError", "ArtifactError", "TaskLoadError", "TaskNotInferred",
]

_WHERE = {
    "score_path": "mmverify.pipeline.evaluate", "score_artifact": "mmverify.pipeline.evaluate", "TaskNotInferred": "mmverify.pipeline.evaluate",
    "Report": "mmverify.pipeline.report",
    "reward": "mmverify.plugin.reward", "reward_batch": "mmverify.plugin.reward",
    "parse_file": "mmverify.reading.artifact", "parse_bytes": "mmverify.reading.artifact", "from_python": "mmverify.reading.artifact",
    "Artifact": "mmverify.reading.artifact", "ArtifactError": "mmverify.reading.artifact",
    "load_task": "mmverify.tasks", "TaskSpec": "mmverify.tasks", "TaskLoadError": "mmverify.tasks",
    "self_check": "mmverify.plugin.selfcheck",
    "MmverifyError": "mmverify.errors",
}


def __getattr__(name):
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mmverify' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
