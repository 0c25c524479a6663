"""Every ```python block of README.md runs as written, in order, in one fresh Python process.

How the blocks run: all ```python blocks of README.md (a fence whose info string is exactly
``python``), top to bottom, are executed one after the other in a new interpreter with a
shared namespace, as a user pasting them into one session would; nothing is defined for them
beforehand, so the README itself must make the SparkSession (with the settings it tells the
user to set) and every name a later block uses. The child process gets the test's
``PYTHONPATH`` (to find sliceflow) but not ``PYSPARK_PYTHON``: the README has to say how Spark's
workers find sliceflow. Tracebacks name README.md and its line numbers.

Streaming: after each block, every streaming query still active in the README's session is
run over the input available (``processAllAvailable``), checked for an error, and stopped;
README blocks need not (and should not) wait for their queries themselves.

Blocks that cannot run here (a cluster's ``spark-submit``, a remote Spark Connect server, …):
put the comment ``<!-- not run: <reason> -->`` on the line before the fence (blank lines
between are allowed); the reason is required and is reported. Blocks fenced as anything
other than ``python`` (``bash``, ``text``, ``python title=...``) are not Python blocks here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest
from support import ROOT

README = os.path.join(ROOT, "README.md")

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\S*)\s*(.*)$")
_NOT_RUN = re.compile(r"^<!--\s*not run:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block: its first code line (1-based), code, and why it is not run."""

    line: int
    code: str
    skip_reason: str | None


def python_blocks(text: str) -> list[Block]:
    """The ```python blocks of a Markdown text, in order, with their ``not run`` marks."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, rest = m.group(1), m.group(2), m.group(3)
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith(fence[0] * len(fence)):
            end += 1
        if lang == "python" and not rest:
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            mark = _NOT_RUN.match(lines[j].strip()) if j >= 0 else None
            reason = None
            if mark is not None:
                reason = mark.group(1)
                if not reason:
                    raise ValueError(f"README.md:{i + 1}: '<!-- not run: -->' needs a reason")
            blocks.append(Block(start + 1, "\n".join(lines[start:end]) + "\n", reason))
        i = end + 1
    return blocks


#: Runs in the child process: blocks from stdin (JSON), one namespace, streams drained.
_RUNNER = textwrap.dedent(
    """
    import json, sys, time, traceback
    blocks = json.load(sys.stdin)
    namespace = {"__name__": "__main__"}

    def drain_streams():
        from pyspark.sql import SparkSession
        spark = SparkSession.getActiveSession()
        if spark is None:
            return 0
        queries = list(spark.streams.active)
        for q in queries:
            q.processAllAvailable()
            error = q.exception()
            q.stop()
            if error is not None:
                raise RuntimeError(f"streaming query {q.name or q.id} failed: {error}")
        return len(queries)

    for line, code in blocks:
        print(f"--- README.md:{line}", flush=True)
        start = time.perf_counter()
        try:
            exec(compile("\\n" * (line - 1) + code, "README.md", "exec"), namespace)
            if "pyspark" in sys.modules:
                n = drain_streams()
                if n:
                    print(f"--- README.md:{line}: {n} streaming queries run and stopped")
            print(f"--- README.md:{line}: {time.perf_counter() - start:.1f} s", flush=True)
        except BaseException:
            traceback.print_exc()
            print(f"FAILED: the block at README.md:{line}", flush=True)
            sys.exit(1)
    print("ALL BLOCKS RAN", flush=True)
    """
)


def test_python_blocks_and_not_run_marks():
    text = textwrap.dedent(
        """\
        ```python
        a = 1
        ```

        <!-- not run: needs a cluster -->

        ```python
        spark_submit()
        ```
        ```bash
        echo no
        ```
        ```python title="x"
        not_python_here()
        ```
        ````python
        b = a + 1
        ```
        ````
        """
    )
    blocks = python_blocks(text)
    assert [(b.line, b.skip_reason) for b in blocks] == [
        (2, None),
        (8, "needs a cluster"),
        (17, None),
    ]
    assert blocks[0].code == "a = 1\n"
    assert blocks[2].code == "b = a + 1\n```\n"
    with pytest.raises(ValueError, match="needs a reason"):
        python_blocks("<!-- not run: -->\n```python\nx\n```\n")


@pytest.mark.spark
def test_readme_python_blocks_run_as_written(tmp_path):
    with open(README, encoding="utf-8") as f:
        blocks = python_blocks(f.read())
    runnable = [b for b in blocks if b.skip_reason is None]
    assert runnable, "README.md has no runnable ```python block"
    for b in blocks:
        if b.skip_reason is not None:
            print(f"README.md:{b.line} not run: {b.skip_reason}")
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    }
    import sliceflow  # the README runs against the sliceflow this test imports

    here = os.path.dirname(os.path.dirname(os.path.abspath(sliceflow.__file__)))
    env["PYTHONPATH"] = os.pathsep.join(p for p in [here, env.get("PYTHONPATH", "")] if p)
    result = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=json.dumps([[b.line, b.code] for b in runnable]),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
    )
    print(result.stdout)
    assert result.returncode == 0 and "ALL BLOCKS RAN" in result.stdout, (
        f"{result.stdout[-6000:]}\n{result.stderr[-6000:]}"
    )
