"""The fixtures of the replay tests: ``task``, the bundled task named by the
test module's ``TASK``, and ``oracle``, a fresh copy of its oracle as parsed."""
from __future__ import annotations

import copy

import pytest
from tests.helpers.replaykit import ANCHORS

from mmverify.reading.artifact import parse_file
from mmverify.tasks import load_task


@pytest.fixture(scope="module")
def task(request):
    return load_task(request.module.TASK, str(ANCHORS))


@pytest.fixture()
def oracle(request):
    return copy.deepcopy(parse_file(str(ANCHORS / request.module.TASK / "oracle.json")).data)
