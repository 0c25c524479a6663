"""Scripts that tests run in subprocesses (a local-cluster or Connect session, a packed
environment, a query killed mid-run); each one's docstring says how to run it by hand."""
