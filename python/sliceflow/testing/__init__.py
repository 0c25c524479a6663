"""Data generators for examples, tests and benchmarks."""

from sliceflow.testing.nexmark import BID_DDL, bid_lines, write_bids

__all__ = ["BID_DDL", "bid_lines", "write_bids"]
