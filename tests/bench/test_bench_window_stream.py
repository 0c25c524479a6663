"""Smoke run of ``bench/bench_window_stream.py --quick`` (streaming window_agg against Spark's
append-mode window aggregation): it runs end to end in its own process and its report has the
expected structure -- every table complete, a verdict for each of the issue's targets, every
query's micro-batches in the JSON -- and bench/README.md has the block ``--write-readme``
rewrites. The numbers themselves are not checked (tiny sizes, shared machine).
"""

from __future__ import annotations

import json
import os
import re

import pytest
from support import ROOT, run_script

SCRIPT = os.path.join(ROOT, "bench", "bench_window_stream.py")
README = os.path.join(ROOT, "bench", "README.md")

#: --quick's defaults: 3 micro-batches of 2,000 bids over 100 auctions (every query but
#: sliceflow's hop 4 h) and 3 over 20,000 auctions (sliceflow hop 1 day, Spark tumble).
QUICK_QUERIES = ("sf-hop1d", "sf-cumulate", "sf-tumble", "spark-tumble", "spark-hop4h")
MANY_QUERIES = ("sf-hop1d", "spark-tumble")
LABELS = {
    "sf-hop1d": "sliceflow hop(1 day, 1 min)",
    "sf-cumulate": "sliceflow cumulate(1 min, 1 day)",
    "sf-tumble": "sliceflow tumble(1 min)",
    "spark-tumble": "Spark tumble(1 min)",
    "spark-hop4h": "Spark hop(4 h, 1 min)",
}
TARGETS = (
    "sliceflow hop(1 day, 1 min) / Spark tumble(1 min)",
    "Spark hop(4 h, 1 min) / sliceflow hop(1 day, 1 min)",
    "sliceflow cumulate(1 min, 1 day) / tumble(1 min)",
)


def tables(text: str) -> list[list[list[str]]]:
    """The markdown tables of ``text``: lists of rows of cells (separator rows dropped)."""
    found: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in text.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if current is None:
                current = []
                found.append(current)
            if not all(re.fullmatch(r"-+:?", c) for c in cells):
                current.append(cells)
        else:
            current = None
    return found


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench-window-stream")
    out_json = tmp / "results.json"
    args = [
        "--quick",
        # The model check of one query (tests/window/test_spark_window_stream.py checks
        # every window kind against the model): the smoke run checks the wiring.
        "--check-queries",
        "sf-hop1d",
        "--data-dir",
        str(tmp / "data"),
    ]
    stdout, stderr = run_script(SCRIPT, [*args, "--json", str(out_json)], timeout=280)
    with open(out_json, encoding="utf-8") as f:
        results = json.load(f)
    return stdout, stderr, results


@pytest.mark.spark
@pytest.mark.timeout(300)
def test_quick_report_structure(quick_run):
    stdout, stderr, results = quick_run
    assert stdout.startswith("Run ") and "`" in stdout.splitlines()[0]  # the command
    assert "Machine: " in stdout
    assert re.search(r"Load average .* during the run: median [\d.]+ .*uptime", stdout)
    assert "check sf-hop1d: ok" in stderr

    found = tables(stdout)
    assert len(found) == 4, [t[0] for t in found]  # times, state, growth, where the time goes
    for table in found:
        widths = {len(row) for row in table}
        assert len(widths) == 1, table  # every row as wide as the header
    times, state, growth, where = found

    # times: one row per (workload, query), the ratio to Spark's tumble on the others
    rows = {(r[0], r[1], r[3]): r for r in times[1:]}
    for q in QUICK_QUERIES:
        row = rows[("3 x 2,000", "100", LABELS[q])]
        assert int(row[4]) == 2  # timed micro-batches: the first left out
        assert float(row[5]) > 0 and float(row[9]) > 0  # median s, wall s
        assert (row[-1] == "") == (q == "spark-tumble")
    for q in MANY_QUERIES:
        assert ("3 x 2,000", "20,000", LABELS[q]) in rows

    # one verdict per target
    for target in TARGETS:
        assert re.search(
            re.escape(target) + r" [\d.]+x.*?\(target [<>]= [\d.]+x: (met|NOT met)\)", stdout
        ), target
    assert set(results["verdicts"]) == set(TARGETS)

    # the state store: sliceflow keeps per bucket its watermark, and its carried rows' base,
    # head and a log entry per micro-batch since the base (2 buckets by default, 8 with
    # --many-buckets; 3 micro-batches)
    state_rows = {(r[0], r[1], r[2]): r for r in state[1:]}
    for auctions, buckets in (("100", 2), ("20,000", 8)):
        rows = int(state_rows[("3 x 2,000", auctions, LABELS["sf-hop1d"])][3])
        assert 3 * buckets <= rows <= 6 * buckets, (auctions, rows)
    assert int(state_rows[("3 x 2,000", "100", LABELS["spark-hop4h"])][3].replace(",", "")) > 0
    assert re.search(r"tumble\(1 min\): SST bytes sliceflow / Spark [\d.]+x", stdout)

    # growth by stretch on the many-auctions workload, where the time goes for every query
    assert growth[1][0] == "keys seen"
    assert {r[0] for r in growth[2:]} == {LABELS[q] for q in MANY_QUERIES}
    profiled = {(r[1], r[2]): r for r in where[1:]}
    for q in QUICK_QUERIES:
        row = profiled[("100", LABELS[q])]
        assert (row[-1] == "") == q.startswith("spark"), row  # the replay: sliceflow only
        assert row[-1] == "" or row[-1].endswith("%")

    # the JSON: every micro-batch of every query
    runs = {(r["workload"], r["query"]): r for r in results["runs"]}
    assert len(runs) == len(QUICK_QUERIES) + len(MANY_QUERIES)
    for run in runs.values():
        assert len(run["trigger_s"]) == 3 and len(run["rows"]) == 3
        assert sum(run["rows"]) == 6_000
        assert run["wall_s"] > 0
        assert sum(run["output_rows"]) + run["no_data_output"] > 0  # windows fired
    sf = runs[("3x2000-a100", "sf-hop1d")]
    assert sf["counters"]["rows_late"] == 0 and sf["counters"]["windows_emitted"] > 0
    assert "failed" not in results


def test_readme_has_the_block():
    """``--write-readme`` rewrites this block (readme_blocks.write_block); it must exist once."""
    with open(README, encoding="utf-8") as f:
        text = f.read()
    assert text.count("<!-- results:window-stream:start -->") == 1
    assert text.count("<!-- results:window-stream:end -->") == 1
    assert "# Streaming windows" in text
