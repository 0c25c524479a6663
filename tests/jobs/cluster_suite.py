"""The local-cluster checks, on one ``local-cluster[2,1,1024]`` session (two executor JVMs of
one core, each with its own Python workers: a cluster starts in tens of seconds, so the checks
share one). Each check prints ``<name> ok=<bool> <summary>``; a check that raises prints
``<name> ok=False error=...`` with its traceback and the others still run.

    PYTHONPATH=tests python tests/jobs/cluster_suite.py              # every check
    PYTHONPATH=tests python tests/jobs/cluster_suite.py window json  # some of them

Exits non-zero when a check failed. The checks (``check(spark) -> (summary, ok)``):

* ``json``: from_json and the sliceflow.json source against Spark's (json_cluster_job.py);
* ``window``: window_agg, batch and streaming, against Spark's window (window_cluster_job.py);
* ``changelog``: changelog_agg against Spark and the model (changelog_cluster_job.py);
* ``topn_dedup``: topn and deduplicate against Spark's row_number (topn_dedup_cluster_job.py).
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable

import changelog_cluster_job
import json_cluster_job
import topn_dedup_cluster_job
import window_cluster_job
from pyspark.sql import SparkSession
from support.cluster_session import cluster_session

CHECKS: dict[str, Callable[[SparkSession], tuple[str, bool]]] = {
    "json": json_cluster_job.check,
    "window": window_cluster_job.check,
    "changelog": changelog_cluster_job.check,
    "topn_dedup": topn_dedup_cluster_job.check,
}


def unknown_checks(names: list[str]) -> list[str]:
    """The names in ``names`` that are not checks."""
    return [n for n in names if n not in CHECKS]


def run(spark: SparkSession, names: list[str]) -> list[str]:
    """Runs the checks ``names`` (every check when empty) on ``spark``, printing each one's
    line; returns the names of those that failed."""
    failed = []
    for name in names or list(CHECKS):
        t0 = time.monotonic()
        try:
            summary, ok = CHECKS[name](spark)
        except Exception as e:  # noqa: BLE001 - reported, and the other checks still run
            traceback.print_exc()
            summary, ok = f"error={type(e).__name__}: {e}".replace("\n", " "), False
        print(f"{name} ok={ok} {summary} ({time.monotonic() - t0:.0f} s)", flush=True)
        if not ok:
            failed.append(name)
    return failed


def main(names: list[str]) -> int:
    unknown = unknown_checks(names)
    if unknown:
        print(f"unknown checks {unknown}; the checks are {list(CHECKS)}", file=sys.stderr)
        return 2
    # The checks' modules on the executors' path too: the functions they ship to Python workers
    # are pickled by reference to them.
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH", "")) if p
    )
    start = time.monotonic()
    spark = cluster_session("sliceflow-local-cluster-suite")
    print(f"session started in {time.monotonic() - start:.0f} s", flush=True)
    try:
        failed = run(spark, names)
    finally:
        spark.stop()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
