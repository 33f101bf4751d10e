"""Test helpers for Lean-dependent tests (pytest is imported lazily).

``require_lean()`` returns the toolchain, or skips the test with the reason
naming what is missing; with ``MMVERIFY_REQUIRE_LEAN=1`` the skip becomes a
failure, so a CI job that is meant to have Lean cannot pass silently without it.
"""
from __future__ import annotations

import os

from . import runner

REQUIRE_ENV = "MMVERIFY_REQUIRE_LEAN"


def require_lean() -> runner.Toolchain:
    import pytest

    try:
        tc = runner.find_lean()
        tc.version()
    except runner.LeanNotFound as exc:
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but no Lean 4 toolchain was found: {exc.missing}", pytrace=False)
        pytest.skip(f"needs a Lean 4 toolchain ({exc.missing}; install with elan reading "
                    f"LeanProofs/lean-toolchain, or set MMVERIFY_LEAN)")
    return tc
