"""Field paths: parsing, rendering, and matching a pattern against a path."""
from hypothesis import given, strategies as st

from mmverify.reading import paths

keys = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True)
segments = st.lists(st.one_of(keys, st.integers(0, 50)), min_size=1, max_size=5).filter(
    lambda s: isinstance(s[0], str))


def test_parse_and_render_round_trip():
    p = paths.parse_path("a.items[*].value")
    assert p.is_list and paths.render_segments(p.segments) == "a.items[*].value"
    head, tail = p.split()
    assert (head.text, tail.text) == ("a.items", "value")


def test_matches_cases():
    pattern = paths.parse_path("a.items[*].value")
    assert paths.matches(pattern, "a.items[3].value")
    assert paths.matches(pattern, "a.items[*].value")
    assert not paths.matches(pattern, "a.items[3].other")
    assert not paths.matches(pattern, "a.items[3]")
    assert not paths.matches(pattern, "a.items.x.value")
    assert not paths.matches(pattern, "not a path")
    assert not paths.matches(paths.parse_path("a.b[2]"), "a.b[3]")


@given(segments, st.data())
def test_a_path_matches_itself_and_its_pattern_matches_every_index(segs, data):
    text = paths.render_segments(tuple(segs))
    path = paths.parse_path(text)
    assert paths.matches(path, path) and paths.matches(path, text)
    ints = [i for i, s in enumerate(segs) if isinstance(s, int)]
    if ints:
        k = data.draw(st.sampled_from(ints))
        pattern = paths.parse_path(paths.render_segments(tuple(
            paths.WILDCARD if i == k else s for i, s in enumerate(segs))))
        assert paths.matches(pattern, path)
        assert paths.concrete(pattern, segs[k]) == text
