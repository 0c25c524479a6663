"""A streaming query that a test kills with SIGKILL mid-run: the ``sliceflow.json`` source (one
file per micro-batch) into a JSON file sink; with ``deduplicate``, through a streaming
``deduplicate(by="i")`` fused into the source's read (the job exits with 3 if it is not); with
``changelog``, through ``changelog_agg(by="i": count, max(f))``, whose state (bucket layout 2:
a base, log entries, a head) the kill interrupts.

    python tests/jobs/json_stream_job.py SOURCE SINK CHECKPOINT [deduplicate | changelog]

tests/json/test_spark_json_stream.py kills the plain query and the changelog one,
test_spark_json_fused_stream.py the fused one.
"""

from __future__ import annotations

import sys

from sliceflow import window as W
from sliceflow.spark import changelog_agg, deduplicate, register
from sliceflow.spark._runtime.session_settings import STREAM_FUSION_CONF
from sliceflow.spark._runtime.state_store import PROVIDER_CONF, ROCKSDB_PROVIDER
from sliceflow.spark.json.fused_scan import FUSED_SOURCE_PREFIX
from sliceflow.testing.spark import local_session

SCHEMA = "f STRING, i INT"


def main(source: str, sink: str, checkpoint: str, operator: str = "") -> None:
    # the state's partitions are fixed by the first run: two, as the tests' session has
    stateful = {PROVIDER_CONF: ROCKSDB_PROVIDER, "spark.sql.shuffle.partitions": "2"}
    conf = {STREAM_FUSION_CONF: "true", **stateful} if operator else {}
    if operator == "changelog":
        # Every later write a log entry (and no cache), so that the kill cuts into a log.
        conf["spark.sliceflow.state.cacheBytes"] = "0"
    spark = local_session("local[2]", "sliceflow-json-stream-job", conf)
    register(spark)
    stream = spark.readStream.format("sliceflow.json").schema(SCHEMA)
    rows = stream.option("maxFilesPerTrigger", 1).load(source)
    if operator == "deduplicate":
        rows = deduplicate(rows, "i")
        if FUSED_SOURCE_PREFIX not in rows._jdf.queryExecution().analyzed().toString():
            sys.exit(3)
    elif operator == "changelog":
        rows = changelog_agg(rows, "i", [W.count().alias("n"), W.max("f").alias("last")])
    elif operator:
        sys.exit(f"unknown operator {operator!r}")
    query = rows.writeStream.format("json").option("checkpointLocation", checkpoint).start(sink)
    query.awaitTermination()  # until killed


if __name__ == "__main__":
    main(*sys.argv[1:5])
