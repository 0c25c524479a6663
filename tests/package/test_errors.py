"""sliceflow's exception classes: one base (SliceflowError) under each, the old bases kept."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sliceflow
from sliceflow import errors
from sliceflow import json as sj
from sliceflow.json.options import OptionError
from sliceflow.json.schemas import SchemaError


@pytest.mark.parametrize(
    "cls", [sliceflow.MalformedRecordError, sliceflow.OptionError, sliceflow.SchemaError]
)
def test_every_error_is_a_sliceflow_error_and_a_value_error(cls: type) -> None:
    assert issubclass(cls, sliceflow.SliceflowError)
    assert issubclass(cls, ValueError)


def test_one_class_per_error_wherever_it_is_imported_from() -> None:
    assert sliceflow.SliceflowError is errors.SliceflowError
    assert sj.MalformedRecordError is errors.MalformedRecordError is sliceflow.MalformedRecordError
    assert sj.OptionError is OptionError is sliceflow.OptionError
    assert sj.SchemaError is SchemaError is sliceflow.SchemaError


def test_the_kernels_malformed_record_is_caught_as_a_sliceflow_error() -> None:
    docs = pa.array(['{"a": 1}', '{"a": '])
    with pytest.raises(sliceflow.SliceflowError, match="Malformed") as info:
        sj.decode(docs, "a INT", options={"mode": "FAILFAST"})
    assert isinstance(info.value, sliceflow.MalformedRecordError)
    assert isinstance(info.value, ValueError)


def test_option_and_schema_errors_are_caught_as_sliceflow_errors() -> None:
    with pytest.raises(sliceflow.SliceflowError):
        sj.decode(pa.array(['{"a": 1}']), "a INT", options={"multiLine": "true"})
    with pytest.raises(sliceflow.SliceflowError):
        sj.decode(pa.array(['{"a": 1}']), "a VARCHAR(3)")
