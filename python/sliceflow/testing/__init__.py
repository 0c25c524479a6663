"""Data generators for examples, tests and benchmarks."""

from sliceflow.testing.github_events import (
    GITHUB_EVENTS_DDL,
    github_event_lines,
    write_github_events,
)
from sliceflow.testing.nexmark import BID_DDL, bid_lines, write_bids

__all__ = [
    "BID_DDL",
    "GITHUB_EVENTS_DDL",
    "bid_lines",
    "github_event_lines",
    "write_bids",
    "write_github_events",
]
