"""Helpers the tests share (imported as ``support.<module>``: tests/conftest.py puts tests/ on
the path, and on PYTHONPATH for the scripts of tests/jobs/ that tests run as subprocesses)."""

from __future__ import annotations

import os

#: tests/, the repository's root, the scripts tests run as subprocesses, the committed data.
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(TESTS)
JOBS = os.path.join(TESTS, "jobs")
DATA = os.path.join(TESTS, "data")
