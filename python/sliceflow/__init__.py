"""sliceflow: Flink SQL's streaming optimizations for PySpark, on a C++ core.

Modules:

* :mod:`sliceflow.json` -- decode JSON text into Arrow with simdjson, exactly as Spark's
  ``from_json`` would (``decode``, ``read_ndjson``, ``iter_ndjson``).
* :mod:`sliceflow.window` -- Flink's sliced windows with Spark's types: window specs
  (``tumble``, ``hop``, ``cumulate``), aggregates (``count``, ``sum``, ``avg``, ``min``, ``max``,
  ``count_distinct``, ``first_value``, ``last_value``) and ``aggregate``, the C++ kernel on
  Arrow data in this process.
* :mod:`sliceflow.spark` -- the PySpark wiring: ``from_json`` as a drop-in Column function,
  the ``sliceflow.json`` data source (``register(spark)``) and ``window_agg``, windowed
  aggregation of a DataFrame.

Errors: every exception class sliceflow defines derives from :class:`SliceflowError`
(:mod:`sliceflow.errors`) and keeps its built-in base (``ValueError``).
"""

from sliceflow.errors import MalformedRecordError, OptionError, SchemaError, SliceflowError
from sliceflow.json import decode, iter_ndjson, read_ndjson

__all__ = [
    "MalformedRecordError",
    "OptionError",
    "SchemaError",
    "SliceflowError",
    "decode",
    "iter_ndjson",
    "read_ndjson",
    "__version__",
]
__version__ = "0.1.0"  # the one source of the version: pyproject.toml reads it at build time
