"""What every benchmark report starts with: when it ran, the command that ran it (as a reader
would retype it), the machine and the versions of what it measured.

Imported by the scripts as ``from run_info import ...`` (the scripts' folder is on the path).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import shlex
import sys

import pyarrow as pa


def machine() -> str:
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({model}), {platform.system()} {platform.release()}"


def versions() -> str:
    parts = [f"Python {platform.python_version()}", f"pyarrow {pa.__version__}"]
    for name in ("polars", "pyspark"):
        try:
            module = __import__(name)
            parts.append(f"{name} {module.__version__}")
        except ImportError:
            pass
    import sliceflow

    parts.append(f"sliceflow {sliceflow.__version__} ({os.path.dirname(sliceflow.__file__)})")
    return ", ".join(parts)


def run_header(script: str, argv: list[str] | None, note: str | None) -> tuple[str, str]:
    """The command line that ran ``script`` (as a reader would retype it) and the header of its
    results: when, the command, the machine and the versions, then ``note``."""
    given = list(sys.argv[1:] if argv is None else argv)
    if "--note" in given:  # shown on its own line below
        at = given.index("--note")
        del given[at : at + 2]
    given = [g for g in given if not g.startswith("--note=")]
    command = shlex.join(["python", script, *given])
    if os.environ.get("PYTHONPATH"):
        command = f"PYTHONPATH={shlex.quote(os.environ['PYTHONPATH'])} {command}"
    header = (
        f"Run {dt.datetime.now():%Y-%m-%d %H:%M}: `{command}`\n\n"
        f"Machine: {machine()}; {versions()}."
    )
    if note:
        header += f"\n\n{note}"
    return command, header
