"""Rewrites one ``<!-- results:NAME:start --> ... <!-- results:NAME:end -->`` block of
bench/README.md (the benchmarks' ``--write-readme``)."""

from __future__ import annotations

import os
import re
import sys

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "README.md")


def write_block(name: str, block: str, header: str, readme: str = README) -> None:
    """Replaces the results block ``name`` with ``header``, a blank line and ``block``."""
    start, end = f"<!-- results:{name}:start -->", f"<!-- results:{name}:end -->"
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{readme} has no {start} ... {end} block")
    replacement = f"{start}\n{header}\n\n{block}\n{end}"
    text = pattern.sub(lambda _: replacement, text)
    with open(readme, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"updated the {name} results in {readme}", file=sys.stderr)
