"""The demo pipeline on Spark's local-cluster mode, with the executors' Python from a packed
virtual environment shipped by ``spark.archives`` (tests/package/test_wheel.py runs it).

    mkdir environment && tar -xzf env.tar.gz -C environment
    PYSPARK_PYTHON=./environment/bin/python \\
        ./environment/bin/python tests/jobs/deploy_job.py env.tar.gz examples/pipeline_demo.py

It first runs one task per partition that reports where the executor's Python found
sliceflow and libsimdjson (``/proc/self/maps``), as ``probe {json}`` lines, then runs
examples/pipeline_demo.py on a small stream and prints ``demo hop_equal=... changelog_equal=...``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from collections.abc import Iterator

from sliceflow.testing.spark import local_session

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"


def probe(_: Iterator[int]) -> Iterator[str]:
    """Where this Python worker's sliceflow, its C++ core and libsimdjson come from."""
    import sliceflow
    import sliceflow._core as core

    with open("/proc/self/maps") as maps:
        mapped = sorted({line.split()[-1] for line in maps if "/" in line})
    yield json.dumps(
        {
            "pid": os.getpid(),
            "cwd": os.getcwd(),
            "executable": sys.executable,
            "sliceflow": sliceflow.__file__,
            "core": core.__file__,
            "simdjson": [p for p in mapped if "simdjson" in os.path.basename(p)],
            "path": sys.path,
        }
    )


def main(archive: str, demo_path: str) -> None:
    spark = local_session(
        "local-cluster[2,1,1024]",
        "sliceflow-packed-environment",
        {
            "spark.archives": f"{archive}#environment",
            "spark.sql.shuffle.partitions": "4",
            "spark.sql.streaming.stateStore.providerClass": ROCKSDB,
        },
    )
    try:
        for line in spark.sparkContext.parallelize(range(4), 4).mapPartitions(probe).collect():
            print("probe", line, flush=True)
        spec = importlib.util.spec_from_file_location("pipeline_demo", demo_path)
        assert spec is not None and spec.loader is not None
        demo = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = demo  # dataclasses look their module up
        spec.loader.exec_module(demo)
        result = demo.main(600, 1, 1, spark=spark, warm_up=False)
        print(f"demo hop_equal={result.hop_equal} changelog_equal={result.changelog_equal}")
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
