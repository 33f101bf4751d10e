"""docs/api.md: every Python example runs as written, and the table lists
exactly the names of ``mmverify.__all__``."""
import os
import re

import pytest

import mmverify

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = open(os.path.join(ROOT, "docs", "api.md"), encoding="utf-8").read()
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC, re.S)


@pytest.mark.parametrize("code", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_example_runs(code, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, "docs/api.md", "exec"), {})


def test_every_public_name_is_documented_and_importable():
    table = set(re.findall(r"`([A-Za-z_]+)[(`]", DOC))
    for name in mmverify.__all__:
        assert name in table, name
        assert getattr(mmverify, name) is not None
    assert issubclass(mmverify.ArtifactError, mmverify.MmverifyError)
    assert issubclass(mmverify.TaskLoadError, (mmverify.MmverifyError, ValueError))


def test_import_is_cheap():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import sys, mmverify; print('sympy' in sys.modules)"],
                         capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_every_public_name_has_a_docstring():
    def documented(obj):
        doc = (obj.__doc__ or "").strip()
        return bool(doc) and not doc.startswith(f"{obj.__name__}(")   # not a dataclass's generated text

    missing = [n for n in mmverify.__all__ if not documented(getattr(mmverify, n))]
    assert not missing, missing
