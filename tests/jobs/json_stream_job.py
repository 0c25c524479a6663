"""A streaming query that tests/json/test_spark_json_stream.py kills with SIGKILL mid-run: the
``sliceflow.json`` source (one file per micro-batch) into a JSON file sink.

    python tests/jobs/json_stream_job.py SOURCE SINK CHECKPOINT
"""

from __future__ import annotations

import sys

from sliceflow.spark import register
from sliceflow.testing.spark import local_session

SCHEMA = "f STRING, i INT"


def main(source: str, sink: str, checkpoint: str) -> None:
    spark = local_session("local[2]", "sliceflow-json-stream-job", {})
    register(spark)
    stream = spark.readStream.format("sliceflow.json").schema(SCHEMA)
    rows = stream.option("maxFilesPerTrigger", 1).load(source)
    query = rows.writeStream.format("json").option("checkpointLocation", checkpoint).start(sink)
    query.awaitTermination()  # until killed


if __name__ == "__main__":
    main(*sys.argv[1:4])
