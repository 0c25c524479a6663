"""Checks sliceflow's JSON decoding on Spark's local-cluster mode (real executor processes):
``sliceflow.spark.from_json`` against Spark's ``from_json`` on the same text, and the
``sliceflow.json`` source against ``spark.read.json``, over 20,000 bids in 4 files.

PYTHONPATH=tests python tests/jobs/cluster_suite.py json   # non-zero exit: rows differ
"""

from __future__ import annotations

import os
import tempfile

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import sliceflow.spark as sfs
from sliceflow.testing import BID_DDL, write_bids

ROWS = 20_000


def check(spark: SparkSession) -> tuple[str, bool]:
    """Both comparisons on ``spark``: the summary line and whether both found no difference."""
    with tempfile.TemporaryDirectory(prefix="sliceflow-json-cluster-") as folder:
        write_bids(folder, ROWS, files=4)
        text = spark.read.text(folder).repartition(4)
        ours = text.select(sfs.from_json("value", BID_DDL).alias("b")).select("b.*")
        theirs = text.select(F.from_json("value", BID_DDL).alias("b")).select("b.*")
        source = spark.read.format("sliceflow.json").schema(BID_DDL).load(folder)
        reference = spark.read.schema(BID_DDL).json(folder)
        workers = text.rdd.mapPartitions(lambda _: [os.getpid()]).distinct().count()
        diff = ours.exceptAll(theirs).count() + theirs.exceptAll(ours).count()
        diff_source = source.exceptAll(reference).count() + reference.exceptAll(source).count()
        rows = ours.count()
    summary = f"rows={rows} workers={workers} diff={diff} diff_source={diff_source}"
    return summary, not diff and not diff_source and rows == ROWS
