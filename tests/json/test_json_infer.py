"""sliceflow.json.infer_schema without Spark: threads and blocks change nothing, options are
checked, and a hypothesis test holds the merge rules against a plain-Python model of Spark's
JsonInferSchema (inferField + compatibleType + canonicalizeType) on generated records."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.json_corpus import corpus

from sliceflow.errors import MalformedRecordError, OptionError
from sliceflow.json import infer_schema, schema_ddl


def _ndjson(docs: list[Any]) -> bytes:
    return b"".join(
        (d if isinstance(d, bytes) else d.encode("utf-8", "surrogatepass")) + b"\n"
        for d in docs
        if d is not None
    )


def repeats_a_name(doc: str | bytes) -> bool:
    """Whether a document repeats a field name (ignoring case) in one object: Spark then fails
    the read ([COLUMN_ALREADY_EXISTS]), so such documents would hide every other difference.
    Documents Python's json cannot read are checked by their quoted names only."""
    seen_dup = False

    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        nonlocal seen_dup
        names = [k.lower() for k, _ in items]
        seen_dup = seen_dup or len(set(names)) != len(names)
        return dict(items)

    text = doc.decode("utf-8", "replace") if isinstance(doc, bytes) else doc
    try:
        json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        names = [n.lower() for n in re.findall(r"[\"']([^\"']*)[\"']\s*:", text)]
        return len(set(names)) != len(names)
    return seen_dup


def _outcome(source: Any, **kwargs: Any) -> Any:
    """The schema, or the error (the corpus repeats names, which fails as in Spark)."""
    try:
        return infer_schema(source, session={"caseSensitive": "true"}, **kwargs)
    except ValueError as e:
        return str(e)


def test_threads_and_blocks_give_one_schema(tmp_path):
    data = _ndjson([d for d in corpus(3000, seed=3) if d is not None and not repeats_a_name(d)])
    path = tmp_path / "c.json"
    path.write_bytes(data)
    one = _outcome(data, threads=1)
    assert isinstance(one, dict)
    assert _outcome(data, threads=2) == one
    assert _outcome(data, threads=7) == one
    assert _outcome(str(path), threads=2, block_size=4096) == one


def test_ddl_of_nested_types():
    schema = infer_schema(b'{"a b": [{"x": 1}], "c`": {"d": true}}')
    assert schema_ddl(schema) == "`a b` ARRAY<STRUCT<`x`: BIGINT>>, `c``` STRUCT<`d`: BOOLEAN>"


def test_options_are_checked():
    with pytest.raises(OptionError, match="prefersDecimal"):
        infer_schema(b"{}", options={"prefersDecimal": "yes"})
    with pytest.raises(OptionError, match="samplingRatio"):
        infer_schema(b"{}", options={"samplingRatio": "0"})
    with pytest.raises(OptionError, match="UTF-8"):
        infer_schema(b"{}", options={"encoding": "UTF-16"})
    with pytest.raises(ValueError, match="threads"):
        infer_schema(b"{}", threads=0)


def test_failfast_names_the_line():
    with pytest.raises(MalformedRecordError, match="line 3"):
        infer_schema(b'{"a": 1}\n\n{"a": \n', options={"MODE": "failfast"})


def test_sampling_is_deterministic_and_reads_a_share():
    data = b"".join(b'{"f%d": 1}\n' % i for i in range(2000))
    half = infer_schema(data, options={"samplingRatio": 0.5})
    assert half == infer_schema(data, options={"samplingRatio": "0.5"}, threads=2)
    assert 800 < len(half["fields"]) < 1200
    assert len(infer_schema(data, options={"samplingRatio": 1.0})["fields"]) == 2000


# --- a plain-Python model of Spark's rules ---------------------------------------------------


def _infer(v: Any) -> Any:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        if -(2**63) <= v < 2**63:
            return "long"
        digits = len(str(abs(v)))
        return ("decimal", digits, 0) if digits <= 38 else "double"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "null" if v == "" else "string"
    if isinstance(v, list):
        t: Any = "null"
        for x in v:
            t = _merge(t, _infer(x))
        return ("array", t)
    return ("struct", sorted((k, _infer(x)) for k, x in v.items()))


def _merge(a: Any, b: Any) -> Any:
    if a == b:
        return a
    if a == "null":
        return b
    if b == "null":
        return a
    if (a, b) in (("long", "double"), ("double", "long")):
        return "double"
    if a == "long" and isinstance(b, tuple) and b[0] == "decimal":
        a = ("decimal", 20, 0)
    if b == "long" and isinstance(a, tuple) and a[0] == "decimal":
        b = ("decimal", 20, 0)
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        if a[0] == "decimal":
            scale = max(a[2], b[2])
            rng = max(a[1] - a[2], b[1] - b[2])
            return "double" if rng + scale > 38 else ("decimal", rng + scale, scale)
        if a[0] == "array":
            return ("array", _merge(a[1], b[1]))
        fields = dict(a[1])
        for k, t in b[1]:
            fields[k] = _merge(fields[k], t) if k in fields else t
        return ("struct", sorted(fields.items()))
    if "double" in (a, b) and any(isinstance(x, tuple) and x[0] == "decimal" for x in (a, b)):
        return "double"
    return "string"


def _canonical(t: Any) -> Any:
    if t == "null":
        return "string"
    if isinstance(t, tuple) and t[0] == "array":
        inner = _canonical(t[1])
        return None if inner is None else ("array", inner)
    if isinstance(t, tuple) and t[0] == "struct":
        fields = [(k, _canonical(x)) for k, x in t[1] if k]
        fields = [(k, x) for k, x in fields if x is not None]
        return ("struct", fields) if fields else None
    return t


def _spark_json(t: Any) -> Any:
    if isinstance(t, str):
        return t
    if t[0] == "decimal":
        return f"decimal({t[1]},{t[2]})"
    if t[0] == "array":
        return {"type": "array", "elementType": _spark_json(t[1]), "containsNull": True}
    return {
        "type": "struct",
        "fields": [
            {"name": k, "type": _spark_json(x), "nullable": True, "metadata": {}} for k, x in t[1]
        ],
    }


_names = st.sampled_from(["a", "b", "c", "B", "é", ""])
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f != 0 or str(f) == "0.0"),
    st.sampled_from(["", "x", "1"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_names, inner, max_size=3),
    max_leaves=8,
)
json_records = st.dictionaries(st.sampled_from(["a", "b", "c", "d"]), _values, max_size=4)


@given(st.lists(json_records, min_size=1, max_size=8))
def test_merge_rules_match_the_model(records):
    root: Any = ("struct", [])
    for r in records:
        root = _merge(root, _infer(r))
    model = _canonical(root) or ("struct", [])
    text = "\n".join(json.dumps(r) for r in records).encode()
    ours = infer_schema(text, threads=2, session={"caseSensitive": "true"})
    assert ours == _spark_json(model)
