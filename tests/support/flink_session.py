"""Every Flink job of a test session in one Flink process, started as the session starts.

A Flink test module declares its jobs in a module-level function ``flink_jobs()`` (job name to
job, in the form :func:`support.flink_reference.run_flink` takes) and gets their changelogs
from :func:`results` in a module fixture. When pytest has collected the session, the conftest
calls :func:`start` with the modules of the selected ``flink`` tests: their jobs, in one list,
go to one Flink runner process in the background (one JVM start-up, and jobs with the same
settings from every module run as one Flink job), while the Spark tests run beside it; most of
a Spark test is waiting, so the Flink job takes cores that would be idle.

Shared by pytest-xdist's workers: each worker collects the same tests, so computes the same
list of jobs; the first to take the lock in the run's shared temporary folder starts the runner
(its spec and result files are named by the list's digest), the others find it started. A
module's fixture waits for the result file. The runner writes its result to a temporary name
and renames it, and a runner that ends in failure (or is killed) leaves an error file, so a
waiting worker never reads half a file and never waits for a runner that has died.

Cost: one Flink process for the whole run (about 10 s of JVM start-up and 2 s per distinct
job settings); without :func:`start` (a module run some other way), :func:`results` runs the
module's jobs alone, as :func:`run_flink` does.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess
import time
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from support.flink_reference import FLINK_PYTHON, RUNNER, flink_available, run_flink

#: How long a module's fixture waits for the session's Flink runner.
WAIT_SECONDS = 1800.0

#: What :func:`start` started: "folder", "digest" and "modules" (module name to its job names
#: and the offset of its first job in the session's list).
_started: dict[str, Any] = {}


def _module_jobs(modules: Iterable[ModuleType]) -> list[tuple[str, list[Any], list[dict]]]:
    """(module name, job names, jobs) of each module with ``flink_jobs()``, sorted by name."""
    out = []
    for module in sorted(modules, key=lambda m: m.__name__):
        jobs = getattr(module, "flink_jobs", None)
        if callable(jobs):
            named = jobs()
            out.append((module.__name__, list(named), list(named.values())))
    return out


def start(modules: Iterable[ModuleType], folder: str) -> None:
    """Starts (or, from another worker, finds started) the runner of every module's jobs.

    ``folder``: a folder every worker of the run shares (the run's temporary root)."""
    per_module = _module_jobs(modules)
    if not per_module or not flink_available():
        return
    jobs = [job for _, _, module_jobs in per_module for job in module_jobs]
    text = json.dumps(jobs, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    os.makedirs(folder, exist_ok=True)
    spec = os.path.join(folder, f"flink-{digest}.jobs.json")
    with open(os.path.join(folder, "flink.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(spec):
            with open(spec + ".tmp", "w") as f:
                f.write(text)
            os.replace(spec + ".tmp", spec)
            env = dict(os.environ)
            env.pop("PYTHONPATH", None)
            # the shell leaves ``<out>.error`` when the runner fails or is killed
            command = '"$0" "$1" "$2" "$3" || echo "exit $?" >"$3.error"'
            with open(os.path.join(folder, f"flink-{digest}.log"), "w") as log:
                subprocess.Popen(
                    ["sh", "-c", command, FLINK_PYTHON, RUNNER, spec, _out(folder, digest)],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    cwd=folder,
                    start_new_session=True,
                )
    offsets, at = {}, 0
    for name, names, module_jobs in per_module:
        offsets[name] = (names, at)
        at += len(module_jobs)
    _started.update(folder=folder, digest=digest, modules=offsets)


def _out(folder: str, digest: str) -> str:
    return os.path.join(folder, f"flink-{digest}.out.json")


def results(module_name: str, jobs: Callable[[], dict[Any, dict]]) -> dict[Any, list[tuple]]:
    """The changelogs of one module's jobs (name to ``(op, *values)`` tuples), from the
    session's runner, or from a run of ``jobs()`` alone when the session started none."""
    if module_name not in _started.get("modules", {}):
        named = jobs()
        return dict(zip(named, run_flink(list(named.values())), strict=True))
    folder, digest = _started["folder"], _started["digest"]
    names, at = _started["modules"][module_name]
    out = _out(folder, digest)
    deadline = time.monotonic() + WAIT_SECONDS
    while not os.path.exists(out):
        _check_runner(folder, digest)
        if time.monotonic() > deadline:
            raise RuntimeError(f"the session's Flink jobs did not end in {WAIT_SECONDS:.0f} s")
        time.sleep(0.5)
    with open(out) as f:
        changelogs = json.load(f)["changelogs"]
    return {
        name: [tuple(r) for r in changes]
        for name, changes in zip(names, changelogs[at : at + len(names)], strict=True)
    }


def _check_runner(folder: str, digest: str) -> None:
    """Raises with the runner's output when it failed or was killed."""
    if os.path.exists(_out(folder, digest) + ".error"):
        with open(os.path.join(folder, f"flink-{digest}.log")) as f:
            tail = "\n".join(f.read().splitlines()[-60:])
        raise RuntimeError(f"the session's Flink jobs failed:\n{tail}")
