"""Path reads written as code (:class:`mmverify.reading.pathcode.PathWriter`), held
to :func:`mmverify.reading.paths.get` on documents whose keys and indices the paths
often meet and often miss."""
from decimal import Decimal

from hypothesis import given, strategies as st

from mmverify.reading import paths
from mmverify.reading.pathcode import MISSING, PathWriter

KEYS = ("a", "b", "c_1", "$replay")
segment = st.one_of(st.sampled_from(KEYS), st.integers(0, 2))
path_segments = st.lists(segment, min_size=1, max_size=4).map(tuple)
documents = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text(max_size=2),
              st.decimals(allow_nan=False, places=2).map(Decimal)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12)


def reader(segment_lists):
    """A compiled function of ``view`` giving the value read at each path, and its writer."""
    w = PathWriter()
    locals_ = [w.walk(s) for s in segment_lists]
    source = "def read(view):\n" + "\n".join(w.lines) + f"\n    return [{', '.join(locals_)}]\n"
    namespace = dict(w.names, __builtins__={"len": len, "dict": dict, "list": list})
    exec(compile(source, "<reads>", "exec"), namespace)
    return namespace["read"], w


@given(st.lists(path_segments, min_size=1, max_size=4), documents)
def test_the_written_reads_give_what_get_gives(segment_lists, doc):
    read, w = reader(segment_lists)
    for segs, got in zip(segment_lists, read(doc)):
        want = paths.get(doc, paths.FieldPath(paths.render_segments(segs), segs))
        if isinstance(want, paths.Missing):
            assert got is MISSING
        else:
            assert got is want
    # every object on the paths is read once: a line per distinct prefix
    prefixes = {s[:k] for s in segment_lists for k in range(1, len(s) + 1)}
    assert len(w.lines) == len(prefixes) == len(w.reads)


def test_reads_at_the_edges():
    read, _ = reader([(), ("a", 0), ("a", 2), ("b", "c_1")])
    view = {"a": [Decimal("1.5"), None], "b": [{"c_1": 1}]}
    assert read(view)[:3] == [view, Decimal("1.5"), MISSING] and read(view)[3] is MISSING
    assert read([]) == [[], MISSING, MISSING, MISSING]
    assert read({"a": {"0": 1}, "b": {"c_1": None}}) == [{"a": {"0": 1}, "b": {"c_1": None}}, MISSING,
                                                         MISSING, None]


def test_constants_are_named_apart_and_kept():
    w = PathWriter({"X": 1})
    a, b = w.const((1, 2), "K"), w.const("text", "K")
    assert a != b and w.names[a] == (1, 2) and w.names[b] == "text" and w.names["X"] == 1
    assert w.names["MISSING"] is MISSING
