"""The identity parser's source segments are those of ``ast.get_source_segment``
on every node of one-line texts, ASCII or not."""
import ast

import pytest
from hypothesis import given, settings, strategies as st

from mmverify.gates.identity import _segment

TEXTS = ["x**2 + y == 1.5", "-(a*b)/ 3 <= 2e3", "ä + β*2 == 1", "p   - q**-2 >= 0.25", "x == x"]


def _nodes(text):
    return [n for n in ast.walk(ast.parse(text, mode="eval")) if hasattr(n, "col_offset")]


@pytest.mark.parametrize("text", TEXTS)
def test_segments_match_ast(text):
    for node in _nodes(text):
        assert _segment(text, node) == ast.get_source_segment(text, node)


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(st.lists(st.sampled_from(["x", "y2", "é", "ξ", "1", "2.5", "+", "-", "*", "/", "**", "(", ")", " "]),
                min_size=1, max_size=12))
def test_segments_match_ast_on_random_texts(parts):
    text = " ".join(("".join(parts) + " == 1").split())
    try:
        nodes = _nodes(text)
    except SyntaxError:
        return
    for node in nodes:
        assert _segment(text, node) == ast.get_source_segment(text, node)
