"""The ``task`` fixture of the replay tests: the bundled task named by the test module's ``TASK``."""
from __future__ import annotations

import pytest
from tests.helpers.replaykit import ANCHORS

from mmverify.tasks import load_task


@pytest.fixture(scope="module")
def task(request):
    return load_task(request.module.TASK, str(ANCHORS))
