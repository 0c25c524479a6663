"""Apache Flink as a reference for the changelog model: runs Flink SQL jobs in a subprocess.

Optional: needs ``.flink-venv`` (``scripts/flink_venv.sh``: PyFlink 2.3.0, Java 17).
:func:`run_flink` takes a list of jobs (the test modules' jobs reach it together, through
support/flink_session.py); every job of one call runs in *one* Python process (one JVM, ~10 s
to start), and jobs with the same settings run as one Flink job (~2 s
a Flink job, whatever its branches: :func:`_runner`). A job is a dict:

* ``sql``: the query (a ``SELECT``); its changelog is collected with the row kinds.
* ``columns``: ``[[name, type], ...]`` with type one of ``INT``, ``BIGINT``, ``DOUBLE``,
  ``STRING``, ``BOOLEAN``; and ``rows``: ``[[op, value, ...], ...]`` with op ``+I``, ``-U``,
  ``+U`` or ``-D``. They become the view ``src`` (``from_changelog_stream`` of a collection).
* ``proctime``: a column name: ``src`` also gets that processing-time attribute
  (``PROCTIME()``), which ``ORDER BY`` of Flink's Deduplicate needs; ``append`` (bool, every
  op ``+I``): ``src`` is an insert-only stream (``from_data_stream``), not a changelog.
* ``rowtime``: ``{"name", "expr", "watermark"}``: ``src`` also gets an event-time attribute
  ``name`` computed by ``expr`` (e.g. ``TO_TIMESTAMP_LTZ(t, 3)``) with the watermark expression
  ``watermark``, which ``ORDER BY`` of Flink's rowtime Deduplicate needs (``append`` only).
* ``sources``: more views, ``{name: {"columns": ..., "rows": ...}, ...}``, each made as
  ``src`` is (with its own ``proctime``, ``rowtime`` or ``append``), besides ``src`` or instead
  of it (e.g. ``l`` and ``r`` for a join); ``sql`` reads them by name (batched, as
  ``<name>_<n>``: every whole word ``name`` of ``sql`` is renamed, so a name must be no other
  word of it).
* ``ddl``: SQL statements run before ``sql`` (e.g. a ``datagen`` table), instead of or besides
  ``columns``/``rows``.
* ``mini_batch`` (bool), ``size`` (``table.exec.mini-batch.size``, default 1e9: one bundle),
  ``latency`` (``table.exec.mini-batch.allow-latency``, default ``1 h``: bundles end at the
  size or at the end of the input only), ``config``: more options.

Always set: parallelism 1 and ``table.optimizer.agg-phase-strategy=ONE_PHASE`` (no local
aggregation), so that a job is deterministic: Flink's ``CountBundleTrigger`` cuts a bundle
after exactly ``size`` input rows of the aggregation.

Run as a script (``python flink_reference.py JOBS.json OUT.json``) it is the job runner.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Any

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLINK_VENV = os.path.join(REPO, ".flink-venv")
FLINK_PYTHON = os.path.join(FLINK_VENV, "bin", "python")
#: This file: run by ``FLINK_PYTHON`` as the job runner.
RUNNER = os.path.abspath(__file__)

OPS = ("+I", "-U", "+U", "-D")


def flink_available() -> bool:
    """Whether ``.flink-venv/bin/python`` exists (``scripts/flink_venv.sh`` makes it)."""
    return os.path.exists(FLINK_PYTHON)


def run_flink(jobs: list[dict], timeout: float = 1800) -> list[list[tuple]]:
    """Runs the jobs in one Flink process; for each, its changelog as ``(op, *values)`` tuples
    in the order Flink emitted them (the runner's output file also holds each job's share of
    the Flink time, ``"elapsed"``)."""
    if not flink_available():
        raise RuntimeError(f"no Flink venv at {FLINK_VENV}: run scripts/flink_venv.sh")
    with tempfile.TemporaryDirectory(prefix="sliceflow-flink-") as tmp:
        spec, out = os.path.join(tmp, "jobs.json"), os.path.join(tmp, "out.json")
        with open(spec, "w") as f:
            json.dump(jobs, f)  # NaN and Infinity: Python's json writes and reads them
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        proc = subprocess.run(
            [FLINK_PYTHON, RUNNER, spec, out],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=tmp,
        )
        if proc.returncode != 0 or not os.path.exists(out):
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-60:])
            raise RuntimeError(f"the Flink jobs failed (exit {proc.returncode}):\n{tail}")
        with open(out) as f:
            result = json.load(f)
    return [[tuple(r) for r in changes] for changes in result["changelogs"]]


# ---------------------------------------------------------------------------------------------
# The job runner (runs inside .flink-venv)


def _batch_key(job: dict) -> str | None:
    """Jobs with the same key run as one Flink job (:func:`_runner`); ``None``: a job alone.

    The key is the job's settings; a job with ``ddl`` (which may define ``src`` itself) or a
    statement that is not a query (``EXPLAIN``) runs alone."""
    if job.get("ddl") or not job["sql"].lstrip().upper().startswith(("SELECT", "WITH")):
        return None
    settings = ("mini_batch", "size", "latency", "config")
    return json.dumps({k: job.get(k) for k in settings}, sort_keys=True)


def _runner(spec_path: str, out_path: str) -> None:  # pragma: no cover - runs under PyFlink
    """Runs the jobs of ``spec_path``, writes their changelogs to ``out_path``.

    Jobs with the same settings (:func:`_batch_key`) run as the branches of one Flink job:
    each job's input is its own view ``src_<n>`` (its query reads it in place of ``src``; so
    too each view ``<name>`` of its ``sources``, as ``<name>_<n>``), and
    the branches' encoded rows (:func:`_collect`) meet in one ``UNION ALL``, each tagged with
    its job. At parallelism 1 a branch is a chain of its own operators (source, aggregation or
    rank with its own bundle trigger, projection) whose rows reach the union in the order it
    emits them, so a job's changelog is the one it has alone; only Flink's per-job cost
    (about 2 s: the local cluster, the job graph, the scheduler) is paid once per batch."""
    with open(spec_path) as f:
        jobs = json.load(f)
    batches: dict[str, list[int]] = {}
    alone: list[int] = []
    for n, job in enumerate(jobs):
        key = _batch_key(job)
        if key is None:
            alone.append(n)
        else:
            batches.setdefault(key, []).append(n)
    changelogs: list[list[list[Any]]] = [[] for _ in jobs]
    elapsed = [0.0 for _ in jobs]
    runs = [(members, True) for members in batches.values()] + [([n], False) for n in alone]
    for members, batched in runs:
        t0 = time.time()
        env, t_env = _table_env(jobs[members[0]])
        for ddl in jobs[members[0]].get("ddl", []):
            t_env.execute_sql(ddl)
        if not batched:
            queries = [jobs[members[0]]["sql"]]
            if "columns" in jobs[members[0]]:
                _source(env, t_env, jobs[members[0]], "src")
            for name, source in jobs[members[0]].get("sources", {}).items():
                _source(env, t_env, source, name)
        else:
            queries = []
            for n in members:
                if "columns" in jobs[n]:
                    _source(env, t_env, jobs[n], f"src_{n}")
                names = ["src", *jobs[n].get("sources", {})]
                for name, source in jobs[n].get("sources", {}).items():
                    _source(env, t_env, source, f"{name}_{n}")
                views = r"\b(" + "|".join(re.escape(v) for v in names) + r")\b"
                queries.append(re.sub(views, lambda m, n=n: f"{m.group(1)}_{n}", jobs[n]["sql"]))
        for n, changes in zip(members, _collect(t_env, queries), strict=True):
            changelogs[n] = changes
            elapsed[n] = (time.time() - t0) / len(members)
    with open(out_path + ".tmp", "w") as f:  # renamed whole: a reader never sees half of it
        json.dump({"changelogs": changelogs, "elapsed": elapsed}, f)
    os.replace(out_path + ".tmp", out_path)


def _table_env(job: dict) -> tuple[Any, Any]:  # pragma: no cover - runs under PyFlink
    """A fresh data stream environment and its table environment, with the job's settings
    (parallelism 1, one-phase aggregation, the mini-batch options, ``config``)."""
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import StreamTableEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env)
    conf = t_env.get_config()
    conf.set("parallelism.default", "1")
    conf.set("table.exec.resource.default-parallelism", "1")
    conf.set("table.optimizer.agg-phase-strategy", "ONE_PHASE")
    conf.set("table.exec.mini-batch.enabled", "true" if job.get("mini_batch") else "false")
    conf.set("table.exec.mini-batch.allow-latency", str(job.get("latency", "1 h")))
    conf.set("table.exec.mini-batch.size", str(job.get("size", 1_000_000_000)))
    for key, value in job.get("config", {}).items():
        conf.set(key, str(value))
    return env, t_env


def _source(env: Any, t_env: Any, job: dict, view: str) -> None:  # pragma: no cover - under PyFlink
    """The job's (or one of its ``sources``') ``columns``/``rows`` as the view ``view``: a
    changelog stream, or an insert-only one (``append``), with its ``proctime`` / ``rowtime``
    attribute."""
    from pyflink.common import Row, RowKind, Types
    from pyflink.table import Schema

    kinds = {
        "+I": RowKind.INSERT,
        "-U": RowKind.UPDATE_BEFORE,
        "+U": RowKind.UPDATE_AFTER,
        "-D": RowKind.DELETE,
    }
    type_infos = {
        "INT": Types.INT(),
        "BIGINT": Types.LONG(),
        "DOUBLE": Types.DOUBLE(),
        "STRING": Types.STRING(),
        "BOOLEAN": Types.BOOLEAN(),
    }
    cols = job["columns"]
    rows = []
    for op, *values in job["rows"]:
        r = Row(*values)
        r.set_row_kind(kinds[op])
        rows.append(r)
    ds = env.from_collection(
        rows, type_info=Types.ROW_NAMED([c for c, _ in cols], [type_infos[t] for _, t in cols])
    )
    if job.get("proctime") or job.get("rowtime"):
        builder = Schema.new_builder()
        if job.get("proctime"):
            builder = builder.column_by_expression(job["proctime"], "PROCTIME()")
        if job.get("rowtime"):
            rt = job["rowtime"]
            builder = builder.column_by_expression(rt["name"], rt["expr"])
            builder = builder.watermark(rt["name"], rt["watermark"])
        make = t_env.from_data_stream if job.get("append") else t_env.from_changelog_stream
        t_env.create_temporary_view(view, make(ds, builder.build()))
    else:
        t_env.create_temporary_view(view, t_env.from_changelog_stream(ds))


def _collect(t_env: Any, queries: list[str]) -> list[list[list[Any]]]:  # pragma: no cover
    """The changelog of each query, ``[op, value, ...]`` per row, fetched in one gateway call.

    PyFlink's own ``collect()`` iterator makes a dozen gateway calls a row (about 12 ms: a
    3,000-row changelog took 33 s). Here each query is wrapped in a projection that writes each
    row as one string: the query's number, then every value as ``n`` (NULL) or ``v`` + base64
    of ``CAST(value AS STRING)``, joined by ``|``, so the row kinds pass through unchanged (a
    projection keeps them); the queries' projections are one ``UNION ALL``, and the JVM drains
    its result into a list and sends back its ``toString()``: ``[+I[0|v…|n], -U[…], …]``, which
    holds no ``,`` or ``]`` but those of the list itself.
    """
    from pyflink.java_gateway import get_gateway

    if len(queries) == 1 and not queries[0].lstrip().upper().startswith(("SELECT", "WITH")):
        with t_env.execute_sql(queries[0]).collect() as it:  # EXPLAIN ...: a row or two
            return [[[str(r.get_row_kind()), *r] for r in it]]
    types, branches = [], []
    for q, sql in enumerate(queries):
        table = t_env.sql_query(sql)
        schema = table.get_schema()
        types.append(
            [str(t).split("(")[0].replace(" NOT NULL", "") for t in schema.get_field_data_types()]
        )
        t_env.create_temporary_view(f"__result_{q}", table)
        fields = "".join(
            f", '|', COALESCE(CONCAT('v', TO_BASE64(CAST(`{name}` AS STRING))), 'n')"
            for name in schema.get_field_names()
        )
        branches.append(f"SELECT CONCAT('{q}'{fields}) AS line FROM __result_{q}")
    result = t_env.execute_sql(" UNION ALL ".join(branches))
    rows = result._j_table_result.collect()
    try:
        text = get_gateway().jvm.org.apache.flink.util.CollectionUtil.iteratorToList(rows)
        text = text.toString()
    finally:
        rows.close()
    out: list[list[list[Any]]] = [[] for _ in queries]
    for item in text[1:-1].split(", ") if text != "[]" else []:
        op, _, payload = item[:-1].partition("[")
        q, *cells = payload.split("|")
        values = [_decode(v, t) for v, t in zip(cells, types[int(q)], strict=True)]
        out[int(q)].append([op, *values])
    return out


def _decode(value: str, sql_type: str) -> Any:  # pragma: no cover - runs under PyFlink
    """One value of :func:`_collect`'s rows as Python: numbers and booleans typed, any other
    type (strings, decimals, date/times) as its SQL string."""
    if value == "n":
        return None
    text = base64.b64decode(value[1:]).decode("utf-8")
    if sql_type in ("TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT"):
        return int(text)
    if sql_type in ("FLOAT", "DOUBLE"):
        return float(text)
    if sql_type == "BOOLEAN":
        return text.upper() == "TRUE"
    return text


if __name__ == "__main__":  # pragma: no cover
    _runner(sys.argv[1], sys.argv[2])
