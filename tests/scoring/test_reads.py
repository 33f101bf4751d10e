"""Reading artifact values for panel scoring: number texts, match_by keys, list reads."""
from decimal import Decimal
from fractions import Fraction

from hypothesis import given, strategies as st

from mmverify.reading import paths
from mmverify.reading.numbers import fraction_text
from mmverify.scoring.reads import item_key, key_index, list_keys, number_text, read_list

from tests.helpers.memtask import metric

finite = st.decimals(allow_nan=False, allow_infinity=False)
scaled = st.builds(lambda n, e: Decimal(n).scaleb(e), st.integers(-10**30, 10**30), st.integers(-90, 40))


@given(d=st.one_of(finite, scaled))
def test_number_text_is_the_fraction_text_of_the_decimal(d):
    assert number_text(d) == fraction_text(Fraction(d))


def test_number_text_cases():
    cases = {"0": "0", "-0": "0", "-0.000": "0", "1.500": "1.5", "1.5E+3": "1500", "0.05": "0.05",
             "-2.000": "-2", "1E-60": "0." + "0" * 59 + "1", "1E-61": "1/" + "1" + "0" * 61}
    for text, want in cases.items():
        assert number_text(Decimal(text)) == want == fraction_text(Fraction(Decimal(text)))


def test_item_keys_pair_numbers_by_value_and_labels_by_text():
    assert item_key(Decimal("0.90")) == item_key("0.9") == item_key(Fraction(9, 10)) == "0.9"
    assert item_key("-1.50") == item_key(Decimal("-1.5")) == "-1.5"
    assert item_key("  Plan\tA ") == "plan a"
    assert item_key("1e999999999") == "1e999999999"     # beyond the number caps: a label
    assert item_key("x1.5") == "x1.5" and item_key("") == ""
    assert item_key(True) is None and item_key(None) is None and item_key({}) is None


items = st.lists(st.fixed_dictionaries({}, optional={
    "name": st.sampled_from(["a", "A ", "b", "0.5", Decimal("0.50"), True, None]),
    "value": st.one_of(st.decimals(-100, 100, places=2), st.sampled_from(["x", True, None])),
}), max_size=6)


@given(items=items, match_by=st.sampled_from([None, "name"]), texts=st.booleans())
def test_a_list_read_with_shared_keys_equals_one_read_alone(items, match_by, texts):
    m = metric("v", "target_value", band=("abs", "1"), path="r.items[*].value", match_by=match_by)
    data = {"r": {"items": items}}
    shared = read_list(m, data, "number", texts, list_keys(data, m.path, match_by), paths.parse_path("value"))
    assert shared == read_list(m, data, "number", texts)
    keys = list_keys(data, m.path, match_by)
    assert keys == list_keys(data, m.path, match_by, paths.parse_path("r.items"))     # the list's path given
    assert len(keys.order) + keys.dupes == len(items)
    assert set(shared.ok) | set(shared.bad) == {k for k, _, keyed in keys.rows if keyed}


@given(items=st.lists(st.one_of(st.fixed_dictionaries({}, optional={
    "name": st.sampled_from(["a", "A ", "b", "#1", "0.5", Decimal("0.50"), Decimal("NaN"), True, None, 3, [], "1e5"])}),
    st.sampled_from([None, "x", Decimal(1), []])), max_size=7), match_by=st.sampled_from([None, "name"]))
def test_the_key_index_alone_is_the_list_keys_index(items, match_by):
    # (the verdict path reads a list's key index without its rows and order)
    keys = list_keys({"r": {"items": items}}, paths.parse_path("r.items[*].value"), match_by)
    index = key_index(items, match_by)
    assert dict(index) == dict(keys.index)
    assert all(keys.items[i] is items[i] for i in index.values())
    assert sorted(index.values()) == [i for _, i, keyed in keys.rows if keyed]


def test_a_missing_or_non_list_reads_missing():
    m = metric("v", "target_value", band=("abs", "1"), path="r.items[*].value")
    assert read_list(m, {"r": {}}, "number").status == "missing"
    assert read_list(m, {"r": {"items": 3}}, "number").detail == "field 'r.items' is not a list"
    for data in ({"r": {}}, {"r": {"items": 3}}, {"r": []}):
        given, alone = list_keys(data, m.path, None, paths.parse_path("r.items")), list_keys(data, m.path, None)
        assert given.missing.reason == alone.missing.reason and given[1:] == alone[1:]


@given(raw=st.one_of(st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-10**6,
                                 max_value=10**6),
                     st.text(max_size=12), st.sampled_from(["0.90", "0.9", " A ", "a", "1e3", "-0"])))
def test_item_key_kept_keys_are_the_keys(raw):
    # a key kept for a string or a number is the one worked out afresh, and
    # equal numbers (and their text) pair, whatever was asked before
    from mmverify.scoring import reads

    fresh = reads._text_key(raw)
    assert reads.item_key(raw) == fresh and reads.item_key(raw) == fresh
    if isinstance(raw, Decimal):
        assert reads.item_key(raw.normalize()) == fresh == reads.item_key(str(raw))
    assert reads.item_key(True) is None and reads.item_key(None) is None
