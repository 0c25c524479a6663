"""sliceflow's exception classes: one base, :class:`SliceflowError`, under each of them.

Every error class keeps the built-in base it always had (``ValueError``), so that an existing
``except ValueError`` goes on catching it; ``except sliceflow.SliceflowError`` catches any of
them.

* :class:`MalformedRecordError` -- a malformed JSON document in FAILFAST mode. The class is
  made by the C++ extension (``sliceflow._core.json``, where the decoder raises it), as a
  subclass of ``ValueError``; this module adds :class:`SliceflowError` to its bases once, at
  import, so that the class the kernel raises is the class users catch.
* :class:`OptionError` -- a JSON option value sliceflow cannot honour.
* :class:`SchemaError` -- a schema that sliceflow cannot decode JSON into.
* :class:`FileReadError` -- a file that cannot be opened or read (also an ``OSError``).

>>> issubclass(MalformedRecordError, SliceflowError), issubclass(MalformedRecordError, ValueError)
(True, True)
"""

from __future__ import annotations

from sliceflow._core import json as _json_kernel

__all__ = [
    "FileReadError",
    "MalformedRecordError",
    "OptionError",
    "SchemaError",
    "SliceflowError",
]


class SliceflowError(Exception):
    """The base of every exception class sliceflow defines."""


class OptionError(SliceflowError, ValueError):
    """A JSON option value sliceflow cannot honour."""


class SchemaError(SliceflowError, ValueError):
    """A schema that sliceflow cannot decode JSON into."""


MalformedRecordError = _json_kernel.MalformedRecordError
if SliceflowError not in MalformedRecordError.__mro__:
    # A heap type of the extension whose layout is BaseException's: Python accepts a new base
    # tuple of the same layout. ValueError stays first, so the method resolution order is
    # MalformedRecordError, ValueError, SliceflowError, Exception.
    MalformedRecordError.__bases__ = (ValueError, SliceflowError)
# The extension's class has no docstring of its own (help() and the API reference read this).
MalformedRecordError.__doc__ = """A malformed JSON document in FAILFAST mode: Spark's
``MALFORMED_RECORD_IN_PARSING`` error, with the record's text (and, from the data source, the
file and line). Made by the C++ extension (``sliceflow._core.json``); a ``ValueError`` and a
:class:`SliceflowError`."""


class FileReadError(SliceflowError, OSError):
    """A file that cannot be opened or read: damaged or cut-short compressed data, a refused
    credential, an unreachable store. The message and :attr:`path` name the file."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path
