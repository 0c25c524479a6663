"""pyspark's entry to sliceflow's data sources: no registration needed.

When a session first uses a Python data source, pyspark imports every importable module
named ``pyspark_*`` and registers its ``DefaultSource`` under ``DefaultSource.name()``
(``pyspark/sql/worker/lookup_data_sources.py``). This module is that entry for
``sliceflow.json``, so ``spark.read.format("sliceflow.json")`` and
``spark.readStream.format("sliceflow.json")`` work in any session whose Python workers can
import sliceflow, without :func:`sliceflow.spark.register` (which adds the session's
settings: see :class:`sliceflow.spark.json.source.JsonDataSource`).
"""

from sliceflow.spark.json.source import JsonDataSource as DefaultSource

__all__ = ["DefaultSource"]
