"""Paths of any scheme to a pyarrow filesystem, with the Hadoop settings a Spark user has.

``resolve("s3a://bucket/key", settings)`` returns ``(pyarrow FileSystem, "bucket/key")``;
``settings`` holds Hadoop configuration keys (``fs.s3a.access.key``, ...), as
:func:`hadoop_settings` takes them from a Spark session's ``spark.hadoop.*`` entries. Schemes:

========================  =========================================================
``s3a://`` ``s3://``      pyarrow ``S3FileSystem`` (``fs.s3a.*`` mapped: see
``s3n://``                :data:`S3A_SETTINGS`; ``fs.s3a.bucket.<b>.*`` overrides)
``gs://`` ``gcs://``      pyarrow ``GcsFileSystem`` (``fs.gs.*`` mapped: see
                          :data:`GCS_SETTINGS`)
``hdfs://`` ``viewfs://`` pyarrow ``HadoopFileSystem`` (needs libhdfs and a JVM classpath)
``abfs://`` ``abfss://``  pyarrow ``AzureFileSystem`` (``fs.azure.account.key.<host>``,
                          ``fs.azure.sas.fixed.token.<host>``)
none, ``file://``         the local filesystem (a path without a scheme: ``fs.defaultFS``'s
                          filesystem when that is set to another scheme, as in Hadoop)
anything else             fsspec's filesystem for the scheme, when fsspec is installed
========================  =========================================================

A filesystem is made once per (scheme, bucket or account, settings) in a process and reused.
Invariant: the returned path has no scheme and is what the filesystem's calls take.
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow.fs as pafs

from sliceflow.errors import FileReadError, OptionError

#: Hadoop ``fs.s3a.*`` keys mapped onto pyarrow ``S3FileSystem`` arguments (the value is
#: the argument it sets; conversions are in :func:`s3_options`).
S3A_SETTINGS: dict[str, str] = {
    "fs.s3a.access.key": "access_key",
    "fs.s3a.secret.key": "secret_key",
    "fs.s3a.session.token": "session_token",
    "fs.s3a.endpoint": "endpoint_override (scheme from connection.ssl.enabled if absent)",
    "fs.s3a.endpoint.region": "region",
    "fs.s3a.region": "region (older name)",
    "fs.s3a.path.style.access": "force_virtual_addressing = not path.style.access",
    "fs.s3a.connection.ssl.enabled": "scheme (https when true, the default; http when false)",
    "fs.s3a.aws.credentials.provider": "anonymous when AnonymousAWSCredentialsProvider",
    "fs.s3a.assumed.role.arn": "role_arn",
    "fs.s3a.assumed.role.session.name": "session_name",
    "fs.s3a.assumed.role.external.id": "external_id",
    "fs.s3a.connection.establish.timeout": "connect_timeout (ms, or with a time unit)",
    "fs.s3a.connection.timeout": "request_timeout (ms, or with a time unit)",
    "fs.s3a.attempts.maximum": "retry_strategy = AwsStandardS3RetryStrategy(attempts)",
    "fs.s3a.proxy.host": "proxy_options host",
    "fs.s3a.proxy.port": "proxy_options port",
    "fs.s3a.proxy.username": "proxy_options username",
    "fs.s3a.proxy.password": "proxy_options password",
}

#: Hadoop GCS connector ``fs.gs.*`` keys mapped onto pyarrow ``GcsFileSystem`` arguments
#: (conversions in :func:`gcs_options`). Credentials otherwise come from Google's default
#: chain (``GOOGLE_APPLICATION_CREDENTIALS``, the metadata server), as pyarrow finds them.
GCS_SETTINGS: dict[str, str] = {
    "fs.gs.auth.type": "anonymous when UNAUTHENTICATED",
    "fs.gs.project.id": "project_id",
    "fs.gs.storage.root.url": "scheme and endpoint_override (host:port) of the URL",
}

#: How long a GCS call is retried before its error is raised. pyarrow's own default is 15
#: minutes, which turns an unreachable endpoint into a hang; Hadoop's connector gives up
#: after 10 retries with backoff, about this long.
GCS_RETRY_SECONDS = 30.0

_S3_SCHEMES = ("s3a", "s3", "s3n")
_TIME_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_TRUE = ("true", "1", "yes")


def hadoop_settings(conf: Mapping[str, str]) -> dict[str, str]:
    """The Hadoop keys in a Spark configuration: ``spark.hadoop.X`` becomes ``X``.

    >>> hadoop_settings({"spark.hadoop.fs.s3a.endpoint": "http://127.0.0.1:9000", "a": "b"})
    {'fs.s3a.endpoint': 'http://127.0.0.1:9000'}
    """
    prefix = "spark.hadoop."
    return {k[len(prefix) :]: v for k, v in conf.items() if k.startswith(prefix)}


def split_scheme(path: str) -> tuple[str, str]:
    """``(scheme, rest)`` of a path: ``""`` for a local path (a Windows drive is no scheme).

    >>> split_scheme("s3a://bucket/key")
    ('s3a', 'bucket/key')
    >>> split_scheme("/tmp/x.json")
    ('', '/tmp/x.json')
    """
    match = re.match(r"^([A-Za-z][A-Za-z0-9+.\-]*):(.*)$", path)
    if not match or len(match.group(1)) == 1:
        return "", path
    scheme, rest = match.group(1).lower(), match.group(2)
    return scheme, rest[2:] if rest.startswith("//") else rest


def _seconds(key: str, value: str) -> float:
    text = value.strip().lower()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]*)", text)
    if not match or (match.group(2) and match.group(2) not in _TIME_UNITS):
        raise OptionError(f"{key}: expected a duration such as 5000 (ms) or 5s, got {value!r}")
    # Hadoop reads these timeouts as milliseconds when no unit is given.
    return float(match.group(1)) * _TIME_UNITS[match.group(2) or "ms"]


def _bucket_settings(settings: Mapping[str, str], bucket: str) -> dict[str, str]:
    """``fs.s3a.*`` with ``fs.s3a.bucket.<bucket>.*`` overrides applied, as Hadoop does."""
    merged = {k: v for k, v in settings.items() if k.startswith("fs.s3a.")}
    prefix = f"fs.s3a.bucket.{bucket}."
    for key, value in settings.items():
        if key.startswith(prefix):
            merged["fs.s3a." + key[len(prefix) :]] = value
    return merged


def s3_options(settings: Mapping[str, str], bucket: str = "") -> dict[str, object]:
    """pyarrow ``S3FileSystem`` keyword arguments from Hadoop ``fs.s3a.*`` settings.

    >>> s3_options({"fs.s3a.endpoint": "127.0.0.1:9000", "fs.s3a.connection.ssl.enabled": "false",
    ...             "fs.s3a.path.style.access": "true", "fs.s3a.access.key": "k"})
    {'access_key': 'k', 'endpoint_override': 'http://127.0.0.1:9000', 'scheme': 'http', \
'force_virtual_addressing': False}
    """
    conf = _bucket_settings(settings, bucket)
    out: dict[str, object] = {}
    for key, arg in (
        ("fs.s3a.access.key", "access_key"),
        ("fs.s3a.secret.key", "secret_key"),
        ("fs.s3a.session.token", "session_token"),
        ("fs.s3a.assumed.role.arn", "role_arn"),
        ("fs.s3a.assumed.role.session.name", "session_name"),
        ("fs.s3a.assumed.role.external.id", "external_id"),
    ):
        if conf.get(key):
            out[arg] = conf[key]
    region = conf.get("fs.s3a.endpoint.region") or conf.get("fs.s3a.region")
    if region:
        out["region"] = region
    ssl = conf.get("fs.s3a.connection.ssl.enabled")
    scheme = None if ssl is None else ("https" if ssl.strip().lower() in _TRUE else "http")
    endpoint = conf.get("fs.s3a.endpoint", "").strip()
    if endpoint:
        if "://" not in endpoint:
            endpoint = f"{scheme or 'https'}://{endpoint}"
        out["endpoint_override"] = endpoint
        scheme = scheme or endpoint.split("://", 1)[0]
    if scheme:
        out["scheme"] = scheme
    path_style = conf.get("fs.s3a.path.style.access")
    if path_style is not None:
        out["force_virtual_addressing"] = path_style.strip().lower() not in _TRUE
    if "Anonymous" in conf.get("fs.s3a.aws.credentials.provider", ""):
        out["anonymous"] = True
    for key, arg in (
        ("fs.s3a.connection.establish.timeout", "connect_timeout"),
        ("fs.s3a.connection.timeout", "request_timeout"),
    ):
        if conf.get(key):
            out[arg] = _seconds(key, conf[key])
    if conf.get("fs.s3a.attempts.maximum"):
        attempts = conf["fs.s3a.attempts.maximum"]
        if not attempts.strip().isdigit():
            raise OptionError(f"fs.s3a.attempts.maximum: expected a count, got {attempts!r}")
        out["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=int(attempts))
    if conf.get("fs.s3a.proxy.host"):
        proxy: dict[str, object] = {"scheme": "http", "host": conf["fs.s3a.proxy.host"]}
        if conf.get("fs.s3a.proxy.port"):
            proxy["port"] = int(conf["fs.s3a.proxy.port"])
        for key in ("username", "password"):
            if conf.get(f"fs.s3a.proxy.{key}"):
                proxy[key] = conf[f"fs.s3a.proxy.{key}"]
        out["proxy_options"] = proxy
    return out


def gcs_options(settings: Mapping[str, str]) -> dict[str, object]:
    """pyarrow ``GcsFileSystem`` keyword arguments from Hadoop ``fs.gs.*`` settings.

    >>> opts = gcs_options({"fs.gs.storage.root.url": "http://127.0.0.1:4443/",
    ...                     "fs.gs.auth.type": "UNAUTHENTICATED"})
    >>> opts["scheme"], opts["endpoint_override"], opts["anonymous"]
    ('http', '127.0.0.1:4443', True)
    """
    out: dict[str, object] = {"retry_time_limit": datetime.timedelta(seconds=GCS_RETRY_SECONDS)}
    if settings.get("fs.gs.auth.type", "").strip().upper() == "UNAUTHENTICATED":
        out["anonymous"] = True
    if settings.get("fs.gs.project.id"):
        out["project_id"] = settings["fs.gs.project.id"]
    root = settings.get("fs.gs.storage.root.url", "").strip()
    if root:
        url = urlsplit(root if "://" in root else f"https://{root}")
        if url.scheme not in ("http", "https") or not url.netloc:
            raise OptionError(
                f"fs.gs.storage.root.url must be an http(s) URL such as "
                f"https://storage.googleapis.com/, got {root!r}"
            )
        out["scheme"] = url.scheme
        out["endpoint_override"] = url.netloc
    return out


def _azure_options(settings: Mapping[str, str], host: str) -> dict[str, object]:
    account = host.split(".", 1)[0]
    out: dict[str, object] = {"account_name": account}
    for key, arg in (
        (f"fs.azure.account.key.{host}", "account_key"),
        (f"fs.azure.sas.fixed.token.{host}", "sas_token"),
        (f"fs.azure.account.oauth2.client.id.{host}", "client_id"),
        (f"fs.azure.account.oauth2.client.secret.{host}", "client_secret"),
    ):
        value = settings.get(key) or settings.get(key.replace(f".{host}", ""))
        if value:
            out[arg] = value
    if "." in host and not host.endswith((".dfs.core.windows.net", ".blob.core.windows.net")):
        out["dfs_storage_authority"] = host  # an emulator or a sovereign cloud's host
        out["blob_storage_authority"] = host
    return out


@functools.lru_cache(maxsize=64)
def _filesystem(scheme: str, authority: str, settings: tuple[tuple[str, str], ...]) -> Any:
    conf = dict(settings)
    if scheme in ("", "file", "local"):
        return pafs.LocalFileSystem()
    if scheme in _S3_SCHEMES:
        return pafs.S3FileSystem(**s3_options(conf, authority))
    if scheme in ("gs", "gcs"):
        return pafs.GcsFileSystem(**gcs_options(conf))
    if scheme in ("hdfs", "viewfs"):
        return pafs.HadoopFileSystem.from_uri(f"{scheme}://{authority}")
    if scheme in ("abfs", "abfss", "wasb", "wasbs"):
        host = authority.split("@", 1)[-1]
        return pafs.AzureFileSystem(**_azure_options(conf, host))
    try:
        import fsspec  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        raise OptionError(
            f"no filesystem for the scheme {scheme!r}: pyarrow serves s3a/s3/s3n, gs, hdfs, "
            "abfs(s) and local paths; install fsspec (and its implementation for "
            f"{scheme!r}) for others"
        ) from None
    handler = pafs.FSSpecHandler(fsspec.filesystem(scheme))
    return pafs.PyFileSystem(handler)


def resolve(path: str, settings: Mapping[str, str] | None = None) -> tuple[Any, str]:
    """``(pyarrow FileSystem, path in it)`` for a path of any scheme.

    >>> fs, inner = resolve("file:///tmp/x.json")
    >>> type(fs).__name__, inner
    ('LocalFileSystem', '/tmp/x.json')
    """
    try:
        return _resolve(path, settings)
    except OSError as exc:
        raise FileReadError(f"cannot reach the filesystem of {path}: {exc}", path=path) from exc


def _resolve(path: str, settings: Mapping[str, str] | None) -> tuple[Any, str]:
    scheme, rest = split_scheme(path)
    default_fs = (settings or {}).get("fs.defaultFS", "").rstrip("/")
    if not scheme and path.startswith("/") and default_fs and split_scheme(default_fs)[0]:
        # Hadoop resolves a path without a scheme against fs.defaultFS (hdfs://nn on YARN).
        if split_scheme(default_fs)[0] not in ("file", "local"):
            return _resolve(default_fs + path, settings)
    conf = tuple(sorted((settings or {}).items()))
    if scheme in ("", "file", "local"):
        if scheme and rest.startswith("//"):
            rest = rest[2:]
        return _filesystem("", "", ()), unquote(rest) if scheme else rest
    if scheme in ("abfs", "abfss", "wasb", "wasbs"):
        # abfss://container@account.dfs.core.windows.net/dir -> container/dir
        parts = urlsplit(f"{scheme}://{rest}")
        container, _, host = parts.netloc.partition("@")
        return _filesystem(scheme, host or container, conf), f"{container}{parts.path}"
    authority, _, key = rest.partition("/")
    if scheme in ("hdfs", "viewfs"):
        return _filesystem(scheme, authority, conf), "/" + key
    if scheme in _S3_SCHEMES or scheme in ("gs", "gcs"):
        return _filesystem(scheme, authority, conf), f"{authority}/{key}".rstrip("/")
    return _filesystem(scheme, authority, conf), path


def local_path(path: str, settings: Mapping[str, str] | None = None) -> str | None:
    """The local path of a file on the local filesystem (no scheme unless ``fs.defaultFS`` in
    ``settings`` names another filesystem, ``file:``, ``local:``), None for any other.

    >>> local_path("file:///tmp/a.json"), local_path("s3a://bucket/a.json")
    ('/tmp/a.json', None)
    """
    fs, inner = resolve(path, settings)
    return str(inner) if isinstance(fs, pafs.LocalFileSystem) else None


def join(base: str, name: str) -> str:
    """``base`` and a child ``name`` joined with one ``/`` (URIs and local paths alike).

    >>> join("s3a://b/dir/", "x.json")
    's3a://b/dir/x.json'
    """
    return base.rstrip("/") + "/" + name if base not in ("", "/") else base + name
