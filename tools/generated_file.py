"""What the generators of committed files in tools/ share: the JVM of a local Spark to ask, and
writing the generated file or, with --check on the command line, comparing it byte for byte.
"""

import os
import sys
from collections.abc import Callable
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def with_spark_jvm(fn: Callable[[Any], str]) -> str:
    """fn(jvm) -> the file's text, run against a local[1] SparkSession's JVM (py4j view)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    try:
        return fn(spark._jvm)
    finally:
        spark.stop()


def write_or_check(path: str, text: str, source: str) -> None:
    """Writes `text` to `path`, or with --check exits 1 if the committed file differs.

    `source` names what the text was derived from, for the messages."""
    if "--check" in sys.argv:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                print(f"{path} differs from what {source} gives", file=sys.stderr)
                sys.exit(1)
        print(f"{path} is up to date ({source})")
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {path} ({source})")
