"""The files a Spark file source reads for a ``load(path)``, found as Spark finds them.

:func:`list_files` takes paths of any scheme (:mod:`sliceflow._io.filesystems`) and the source's
options, and returns one :class:`FileEntry` (path, size, modification time, hive-style
partition values) per data file, sorted by path:

* a path with Hadoop glob characters (``* ? [a-c] [^a] {x,y} \\``) is expanded; a path, or a
  glob, that matches nothing fails with ``[PATH_NOT_FOUND] Path does not exist: <path>``
  (``ignoreMissingFiles`` does not change that, as in Spark; it covers files that go away
  after listing, see :mod:`sliceflow._io.codecs`);
* a folder is listed recursively; names starting with ``_`` (unless they hold ``=``) or
  ``.``, and names ending with ``._COPYING_``, are skipped, files and folders alike, also
  when named directly; files in plain subfolders (no ``k=v``) of a folder named are read only
  under ``recursiveFileLookup`` or inside partition folders, as Spark reads them;
* ``pathGlobFilter`` keeps files whose name matches; ``modifiedBefore`` / ``modifiedAfter``
  (``YYYY-MM-DDTHH:mm:ss`` in the ``timeZone`` option or the session's) keep files modified
  strictly before / after;
* without ``recursiveFileLookup``, ``k=v`` folders between a base path (the ``basePath``
  option, or each folder named, or the folder of each file named) and a file are its
  partition values; different column lists fail with ``CONFLICTING_PARTITION_COLUMN_NAMES``,
  different roots with ``CONFLICTING_DIRECTORY_STRUCTURES``, and files outside any partition
  folder are left out when there are partitions (all as Spark does).

Typing the partition values is :mod:`sliceflow._io.partitions`' job
(:func:`partition_fields`). Cost: one recursive listing call per named folder (one paginated
LIST on object stores), one per glob level.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from sliceflow._io.filesystems import join, resolve, split_scheme
from sliceflow._io.partitions import infer_column_types, parse_folder
from sliceflow.errors import FileReadError, OptionError, SchemaError

_GLOB_CHARS = re.compile(r"[*?\[{\\]")


@dataclasses.dataclass(frozen=True)
class FileEntry:
    """One data file: where it is, its size, when it changed, its partition folders' values.

    ``path`` keeps the scheme it was named with (``s3a://b/k``), so that
    :func:`sliceflow._io.codecs.open_input` opens it again anywhere; ``partition_values`` are
    ``(column, raw value)`` pairs, outermost folder first, values still path-escaped.
    """

    path: str
    size: int
    modification_time_ms: int
    partition_values: tuple[tuple[str, str], ...] = ()


@dataclasses.dataclass(frozen=True)
class ListingOptions:
    """The listing options of a Spark file source (names as Spark spells them)."""

    path_glob_filter: str | None = None
    recursive_file_lookup: bool = False
    modified_before_ms: int | None = None
    modified_after_ms: int | None = None
    base_path: str | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, str], time_zone: str = "UTC") -> ListingOptions:
        """Reads ``pathGlobFilter``, ``recursiveFileLookup``, ``modifiedBefore``,
        ``modifiedAfter`` and ``basePath`` (names case-insensitive).

        >>> ListingOptions.from_options({"recursivefilelookup": "true"}).recursive_file_lookup
        True
        """
        lower = {k.lower(): v for k, v in options.items()}
        recursive = lower.get("recursivefilelookup", "false").strip().lower()
        if recursive not in ("true", "false"):
            raise OptionError(f"recursiveFileLookup must be true or false, got {recursive!r}")
        return cls(
            path_glob_filter=lower.get("pathglobfilter"),
            recursive_file_lookup=recursive == "true",
            modified_before_ms=_threshold(lower, "modifiedbefore", time_zone),
            modified_after_ms=_threshold(lower, "modifiedafter", time_zone),
            base_path=lower.get("basepath"),
        )


def _threshold(options: Mapping[str, str], name: str, time_zone: str) -> int | None:
    text = options.get(name)
    if text is None:
        return None
    from sliceflow._io.partitions import cast_value

    try:
        value = cast_value(name, text, pa.timestamp("us", tz="UTC"), time_zone)
    except SchemaError:
        value = None
    if value is None:
        raise OptionError(
            f"The timestamp provided for the '{name}' option is invalid. The expected format "
            f"is 'YYYY-MM-DDTHH:mm:ss', but the provided timestamp: {text}"
        )
    return int(value.value) // 1000


def hidden(name: str) -> bool:
    """Whether Spark skips a file or folder of this name.

    >>> [hidden(n) for n in ["_SUCCESS", ".crc", "day=1", "_x=1", "a.json._COPYING_", "a"]]
    [True, True, False, False, True, False]
    """
    return (
        (name.startswith("_") and "=" not in name)
        or name.startswith(".")
        or name.endswith("._COPYING_")
    )


def glob_regex(pattern: str) -> re.Pattern[str]:
    """A regular expression for one path component of a Hadoop glob.

    >>> bool(glob_regex("part-{0,1}*.json").fullmatch("part-1x.json"))
    True
    """
    out, i, depth = [], 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "{":
            out.append("(?:")
            depth += 1
        elif c == "}" and depth:
            out.append(")")
            depth -= 1
        elif c == "," and depth:
            out.append("|")
        elif c == "[":
            close = pattern.find("]", i + 2)
            if close < 0:
                raise OptionError(f"Illegal file pattern: unclosed character class in {pattern!r}")
            body = pattern[i + 1 : close]
            if body[:1] in ("^", "!"):
                body = "^" + body[1:].replace("\\", "\\\\")
            else:
                body = body.replace("\\", "\\\\").replace("^", "\\^")
            out.append(f"[{body}]")
            i = close
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise OptionError(f"Illegal file pattern: unclosed group in {pattern!r}")
    return re.compile("".join(out), re.S)


def _info(fs: Any, inner: str, uri: str) -> Any:
    """``FileInfo`` of one path; a refused or failed call names the path the user gave."""
    try:
        return fs.get_file_info(inner)
    except FileNotFoundError:
        raise _not_found(uri) from None
    except OSError as exc:
        raise FileReadError(f"cannot look up {uri}: {exc}", path=uri) from exc


def _children(fs: Any, inner: str, uri: str, recursive: bool) -> list[Any]:
    """``FileInfo`` of what a folder holds (all levels when ``recursive``), or [] if gone."""
    # pyarrow's GcsFileSystem lists a folder's sub-folders only where a marker object exists
    # (apache/arrow#35993); folders that other tools made exist only as name prefixes. List
    # the whole subtree there (on GCS about as cheap as one level) and derive the children.
    implicit = not recursive and isinstance(fs, pafs.GcsFileSystem)
    selector = pafs.FileSelector(
        inner or "/", recursive=recursive or implicit, allow_not_found=True
    )
    try:
        infos = list(fs.get_file_info(selector))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise FileReadError(f"cannot list {uri}: {exc}", path=uri) from exc
    return _direct_children(inner, infos) if implicit else infos


def _direct_children(inner: str, infos: list[Any]) -> list[Any]:
    """The entries one level under ``inner`` of a recursive listing: its files, and a folder
    for every first path component below it (whether or not a marker object names it)."""
    base = inner.rstrip("/") + "/"
    out: dict[str, Any] = {}
    for info in infos:
        relative = info.path[len(base) :] if info.path.startswith(base) else ""
        head, sep, _ = relative.partition("/")
        if not head:
            continue
        if sep or info.type == pafs.FileType.Directory:
            out.setdefault(head, pafs.FileInfo(base + head, pafs.FileType.Directory))
        else:
            out[head] = info
    return list(out.values())


def _not_found(path: str) -> FileNotFoundError:
    """Spark's error, the path qualified as Spark's file index qualifies it (a local path:
    ``file:`` and the absolute path)."""
    if not split_scheme(path)[0]:
        path = "file:" + os.path.abspath(path)
    return FileNotFoundError(f"[PATH_NOT_FOUND] Path does not exist: {path}.")


def _expand_glob(path: str, settings: Mapping[str, str] | None) -> list[tuple[str, Any]]:
    """``(uri, FileInfo)`` of every file or folder a Hadoop glob matches, sorted by path."""
    scheme, rest = split_scheme(path)
    prefix = path[: len(path) - len(rest)]
    if scheme in ("", "file", "local"):
        head, parts = ("/" if rest.startswith("/") else ""), rest.strip("/").split("/")
    else:
        first, _, tail = rest.partition("/")
        head, parts = first, [p for p in tail.split("/") if p]
    current = [prefix + head]
    for level, part in enumerate(parts):
        last = level == len(parts) - 1
        if not _GLOB_CHARS.search(part):
            current = [join(c, part) for c in current]
            continue
        regex = glob_regex(part)
        found = []
        for parent in current:
            fs, inner = resolve(parent, settings)
            for child in _children(fs, inner, parent, recursive=False):
                if regex.fullmatch(child.base_name) and (last or child.is_file is False):
                    found.append(join(parent, child.base_name))
        current = sorted(found)
    out = []
    for uri in current:
        fs, inner = resolve(uri, settings)
        info = _info(fs, inner, uri)
        if info.type != pafs.FileType.NotFound:
            out.append((uri, info))
    return out


def _leaf_files(
    uri: str, info: Any, settings: Mapping[str, str] | None
) -> list[tuple[str, Any, str]]:
    """``(file uri, FileInfo, folder uri)`` of the data files under one root (or the root)."""
    if info.type == pafs.FileType.File:
        parent = uri.rsplit("/", 1)[0] if "/" in uri else ""
        return [] if hidden(info.base_name) else [(uri, info, parent)]
    fs, inner = resolve(uri, settings)
    base = inner.rstrip("/")
    out = []
    for child in _children(fs, inner, uri, recursive=True):
        if child.type != pafs.FileType.File:
            continue
        relative = child.path[len(base) :].lstrip("/")
        names = relative.split("/")
        if any(hidden(n) for n in names):
            continue
        folder = join(uri, "/".join(names[:-1])) if len(names) > 1 else uri.rstrip("/")
        out.append((join(uri, relative), child, folder))
    return out


def _partition_of(folder: str, bases: set[str]) -> tuple[tuple[tuple[str, str], ...], str]:
    """Spark's ``parsePartition``: ``k=v`` folder names from ``folder`` up to a base path."""
    columns: list[tuple[str, str]] = []
    current = folder.rstrip("/")
    while True:
        if current in bases:
            break
        name = current.rsplit("/", 1)[-1]
        column = parse_folder(name) if "/" in current else None
        if column is not None:
            columns.append(column)
        parent = current.rsplit("/", 1)[0] if "/" in current else ""
        if (column is None and columns) or not parent or parent == current:
            break
        current = parent
    return tuple(reversed(columns)), current


def list_files(
    paths: str | Sequence[str],
    options: Mapping[str, str] | None = None,
    settings: Mapping[str, str] | None = None,
    *,
    time_zone: str = "UTC",
) -> list[FileEntry]:
    """The data files Spark reads for ``load(paths)`` with these options (see module docs).

    ``settings`` are Hadoop keys (``fs.s3a.endpoint`` ...), as
    :func:`sliceflow._io.filesystems.hadoop_settings` takes them from a session.

    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> os.makedirs(f"{root}/day=1"); _ = open(f"{root}/day=1/a.json", "w").write("{}\\n")
    >>> [(os.path.basename(e.path), e.size, e.partition_values) for e in list_files(root)]
    [('a.json', 3, (('day', '1'),))]
    """
    listing = ListingOptions.from_options(options or {}, time_zone)
    roots: list[tuple[str, Any]] = []
    for path in [paths] if isinstance(paths, str) else list(paths):
        if not path:
            raise OptionError("an empty path was given to load()")
        fs, inner = resolve(path, settings)
        if _GLOB_CHARS.search(path.split("://", 1)[-1]):
            matched = _expand_glob(path, settings)
            if not matched:
                raise _not_found(path)
            roots.extend(matched)
            continue
        info = _info(fs, inner, path)
        if info.type == pafs.FileType.NotFound:
            raise _not_found(path)
        roots.append((path.rstrip("/") if info.type != pafs.FileType.File else path, info))

    name_filter = glob_regex(listing.path_glob_filter) if listing.path_glob_filter else None
    files: dict[str, tuple[Any, str]] = {}
    for uri, info in roots:
        for file_uri, file_info, folder in _leaf_files(uri, info, settings):
            if name_filter and not name_filter.fullmatch(file_info.base_name):
                continue
            mtime = _mtime_ms(file_info)
            if listing.modified_before_ms is not None and not mtime < listing.modified_before_ms:
                continue
            if listing.modified_after_ms is not None and not mtime > listing.modified_after_ms:
                continue
            files.setdefault(file_uri, (file_info, folder))

    if listing.recursive_file_lookup:
        partitions: dict[str, tuple[tuple[str, str], ...]] = {}
    else:
        bases = (
            {listing.base_path.rstrip("/")}
            if listing.base_path
            else {
                uri.rsplit("/", 1)[0] if info.type == pafs.FileType.File else uri
                for uri, info in roots
            }
        )
        partitions = _discover(sorted({folder for _, folder in files.values()}), bases)
    # Spark reads, with partition folders, only the files inside them; without (and without
    # recursiveFileLookup), only the files named and those directly inside a folder named.
    top = {uri for uri, info in roots if info.type != pafs.FileType.File}
    entries = []
    for uri in sorted(files):
        file_info, folder = files[uri]
        values = partitions.get(folder, ())
        if partitions and not values:
            continue
        if not partitions and not listing.recursive_file_lookup:
            if folder not in top and uri not in {r for r, _ in roots}:
                continue
        entries.append(FileEntry(uri, int(file_info.size or 0), _mtime_ms(file_info), values))
    return entries


def _discover(folders: Sequence[str], bases: set[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    found: dict[str, tuple[tuple[str, str], ...]] = {}
    roots: dict[str, str] = {}
    for folder in folders:
        values, root = _partition_of(folder, bases)
        if values:
            found[folder] = values
            roots[folder] = root
    if not found:
        return {}
    if len(set(roots.values())) > 1:
        listed = "\n\t".join(sorted(set(roots.values())))
        raise SchemaError(
            "[CONFLICTING_DIRECTORY_STRUCTURES] Conflicting directory structures detected. "
            f"Suspicious paths:\n\t{listed}\nIf provided paths are partition directories, "
            'please set "basePath" in the options of the data source to specify the root '
            "directory of the table."
        )
    name_lists = sorted({tuple(c.lower() for c, _ in v) for v in found.values()})
    if len(name_lists) > 1:
        listed = "\n\t".join(
            f"Partition column name list #{i}: {', '.join(n)}" for i, n in enumerate(name_lists)
        )
        raise SchemaError(
            f"[CONFLICTING_PARTITION_COLUMN_NAMES] Conflicting partition column names "
            f"detected:\n\t{listed}\nFor partitioned table directories, data files should only "
            "live in leaf directories. And directories at the same level should have the same "
            "partition column name."
        )
    return found


def _mtime_ms(info: Any) -> int:
    mtime = info.mtime
    if mtime is None:
        return 0
    if mtime.tzinfo is None:
        mtime = mtime.replace(tzinfo=dt.timezone.utc)
    return int(mtime.timestamp() * 1000)


def partition_fields(
    entries: Sequence[FileEntry], *, type_inference: bool = True, time_zone: str = "UTC"
) -> list[pa.Field]:
    """The partition columns of listed files, typed as Spark types them (empty if none).

    >>> partition_fields([FileEntry("/t/k=1/a.json", 3, 0, (("k", "1"),))])
    [pyarrow.Field<k: int32>]
    """
    return infer_column_types(
        (e.partition_values for e in entries), type_inference=type_inference, time_zone=time_zone
    )
