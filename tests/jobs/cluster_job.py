"""Runs sliceflow on Spark's local-cluster mode (real executor processes) and checks the rows.

python tests/jobs/cluster_job.py FOLDER   # exits non-zero when sliceflow's rows differ
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import functions as F

import sliceflow.spark as sfs
from sliceflow.testing import BID_DDL, write_bids
from sliceflow.testing.spark import local_session


def main(folder: str) -> None:
    spark = local_session("local-cluster[2,1,1024]", "sliceflow-local-cluster")
    try:
        write_bids(folder, 20_000, files=4)
        text = spark.read.text(folder).repartition(4)
        ours = text.select(sfs.from_json("value", BID_DDL).alias("b")).select("b.*")
        theirs = text.select(F.from_json("value", BID_DDL).alias("b")).select("b.*")
        source = spark.read.format("sliceflow.json").schema(BID_DDL).load(folder)
        reference = spark.read.schema(BID_DDL).json(folder)
        workers = text.rdd.mapPartitions(lambda _: [os.getpid()]).distinct().count()
        diff = ours.exceptAll(theirs).count() + theirs.exceptAll(ours).count()
        diff_source = source.exceptAll(reference).count() + reference.exceptAll(source).count()
        print(f"rows={ours.count()} workers={workers} diff={diff} diff_source={diff_source}")
        if diff or diff_source or ours.count() != 20_000:
            sys.exit(1)
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
