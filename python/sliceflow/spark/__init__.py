"""The PySpark wiring of sliceflow.

* :func:`from_json` -- a drop-in for ``pyspark.sql.functions.from_json`` that decodes with
  simdjson in the Python workers, batch and streaming alike.
* :func:`register` -- registers the ``sliceflow.json`` data source for NDJSON files, so that
  file input is decoded where it is read and never travels JVM -> Python as text.
"""

from sliceflow.spark.datasource import JsonDataSource, register
from sliceflow.spark.functions import from_json

__all__ = ["JsonDataSource", "from_json", "register"]
