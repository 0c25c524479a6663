"""The local-cluster checks on the environment a user deploys: Spark's local-cluster mode, the
executors' Python from a packed virtual environment shipped by ``spark.archives``, the checks'
code shipped as a zip (``SparkContext.addPyFile``, as ``--py-files`` ships a job's modules);
tests/package/test_wheel.py runs it.

    mkdir environment && tar -xzf env.tar.gz -C environment
    PYSPARK_PYTHON=./environment/bin/python \\
        ./environment/bin/python tests/jobs/deploy_job.py env.tar.gz checks.zip [check ...]

``checks.zip`` holds tests/jobs/*.py and the package tests/support/. The job first runs one
task per partition that reports where the executor's Python found sliceflow and libsimdjson
(``/proc/self/maps``), as ``probe {json}`` lines, then the checks of cluster_suite.py (every
one, or those named), each printing ``<name> ok=<bool> <summary>``. Exits non-zero when a
check failed.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator


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


def main(archive: str, checks: str, names: list[str]) -> int:
    sys.path.insert(0, checks)  # the driver imports the checks from the zip the executors get
    import cluster_suite
    from support.cluster_session import cluster_session

    unknown = cluster_suite.unknown_checks(names)
    if unknown:
        print(f"unknown checks {unknown}; the checks are {list(cluster_suite.CHECKS)}")
        return 2
    start = time.monotonic()
    spark = cluster_session(
        "sliceflow-packed-environment", {"spark.archives": f"{archive}#environment"}
    )
    spark.sparkContext.addPyFile(checks)
    print(f"session started in {time.monotonic() - start:.0f} s", flush=True)
    try:
        for line in spark.sparkContext.parallelize(range(4), 4).mapPartitions(probe).collect():
            print("probe", line, flush=True)
        failed = cluster_suite.run(spark, names)
    finally:
        spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
