"""Keeps PySpark's transformWithStateInPandas driver worker off the user's console.

For each stateful streaming query PySpark starts one short-lived Python process on the driver
(``pyspark.sql.streaming.transform_with_state_driver_worker``) that runs the processor's
set-up once. It prints debugging lines to its standard output (that it started, the
processor it received, the state server's port and key schema, before and after the set-up),
which Spark copies to the driver's stderr: five lines and five blank ones per query. Its
results travel through a socket, so its standard output carries nothing else.

:func:`quiet_driver_worker` runs when that process unpickles a sliceflow processor (the
import of ``bucket_processor``) and points the process's file descriptor 1 at ``/dev/null``:
the four lines printed after that import no longer reach the console. The first ("Starting
Streaming TransformWithStateInPandas Python worker.") is printed before any sliceflow code
runs and still shows. In any other process (executors' workers, the user's driver) it does
nothing. Cost: one check of ``__main__`` per import.
"""

from __future__ import annotations

import os
import sys

#: The module PySpark runs as ``__main__`` in the driver worker.
DRIVER_WORKER = "pyspark.sql.streaming.transform_with_state_driver_worker"


def quiet_driver_worker() -> bool:
    """Silences the standard output of PySpark's driver worker; False in any other process."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if getattr(spec, "name", None) != DRIVER_WORKER:
        return False
    try:
        sys.stdout.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:  # nothing to gain by failing the query over its debugging output
        return False
    try:
        os.dup2(devnull, 1)
    finally:
        os.close(devnull)
    return True
