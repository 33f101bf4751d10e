"""``mmverify.pipeline.report.dumps`` writes exactly the text of ``json.dumps(obj,
sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)`` plus a newline,
and raises what json raises, for any object."""
import enum
import json

import pytest
from hypothesis import given, settings, strategies as st

from mmverify.pipeline.report import dumps


def reference(obj) -> str:
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


class Label(str):
    pass


class Level(enum.IntEnum):
    LOW = 1


scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**40, 10**40),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=12),
                    st.sampled_from(["", "é", "\u2028", "\x00", '"\\/', "\ud7ff", "日本"]))
objects = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=5), st.tuples(c, c),
                                                    st.dictionaries(st.text(max_size=6), c, max_size=5)),
                       max_leaves=40)


@settings(max_examples=400, deadline=None, database=None, derandomize=True)
@given(objects)
def test_same_text_as_json(obj):
    assert dumps(obj) == reference(obj)


@pytest.mark.parametrize("obj", [
    {}, [], (), {"a": {}}, {"a": []}, [[]], [{}], 0, -0.0, 1e300, 5e-324, 2**70, "x", None, True,
    {"b": 1, "a": [1, 2.5, None, {"c": "d"}]},
    {1: "int key", 2: "b"}, {None: 1}, {True: 1, False: 2}, {2.5: 1},       # keys json turns into text
    {"label": Label("sub"), "level": Level.LOW},                            # subclasses of str and int
])
def test_unusual_values_match_json(obj):
    assert dumps(obj) == reference(obj)


@pytest.mark.parametrize("obj", [float("nan"), {"x": [float("inf")]}, {"x": object()}, {1: 1, "a": 2}, {True: 1, "x": 2},
                                 {"d": {1, 2}}])
def test_what_json_refuses_is_refused_alike(obj):
    with pytest.raises(Exception) as ours:
        dumps(obj)
    with pytest.raises(Exception) as theirs:
        reference(obj)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_a_cycle_is_refused_alike():
    a: list = []
    a.append(a)
    with pytest.raises(ValueError, match="Circular reference"):
        dumps({"a": a})
