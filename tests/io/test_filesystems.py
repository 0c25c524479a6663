"""sliceflow._io.filesystems: paths of each scheme to a pyarrow filesystem, and the Hadoop
``fs.s3a.*`` and ``fs.gs.*`` settings a Spark user has mapped onto pyarrow's options
(no network)."""

from __future__ import annotations

import sys

import pyarrow.fs as pafs
import pytest

from sliceflow._io.filesystems import (
    GCS_RETRY_SECONDS,
    gcs_options,
    hadoop_settings,
    resolve,
    s3_options,
    split_scheme,
)
from sliceflow.errors import OptionError


def test_s3a_settings_map_onto_pyarrow_options():
    settings = hadoop_settings(
        {
            "spark.hadoop.fs.s3a.access.key": "AK",
            "spark.hadoop.fs.s3a.secret.key": "SK",
            "spark.hadoop.fs.s3a.session.token": "TOKEN",
            "spark.hadoop.fs.s3a.endpoint": "minio.local:9000",
            "spark.hadoop.fs.s3a.endpoint.region": "eu-west-1",
            "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.connection.establish.timeout": "5000",
            "spark.hadoop.fs.s3a.connection.timeout": "2m",
            "spark.hadoop.fs.s3a.proxy.host": "proxy",
            "spark.hadoop.fs.s3a.proxy.port": "3128",
            "spark.hadoop.fs.s3a.bucket.special.secret.key": "SPECIAL",
            "spark.sql.shuffle.partitions": "4",
        }
    )
    assert "spark.sql.shuffle.partitions" not in settings
    options = s3_options(settings, "data")
    assert options["access_key"] == "AK" and options["secret_key"] == "SK"
    assert options["session_token"] == "TOKEN"
    assert options["endpoint_override"] == "http://minio.local:9000"
    assert options["scheme"] == "http" and options["region"] == "eu-west-1"
    assert options["force_virtual_addressing"] is False
    assert options["connect_timeout"] == 5.0 and options["request_timeout"] == 120.0
    assert options["proxy_options"] == {"scheme": "http", "host": "proxy", "port": 3128}
    assert s3_options(settings, "special")["secret_key"] == "SPECIAL"  # per-bucket override
    provider = "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"
    anonymous = s3_options({"fs.s3a.aws.credentials.provider": provider})
    assert anonymous == {"anonymous": True}
    with pytest.raises(OptionError, match="fs.s3a.connection.timeout"):
        s3_options({"fs.s3a.connection.timeout": "soon"})


def test_paths_of_each_scheme_resolve_to_their_filesystem():
    assert split_scheme("C:/data/x.json") == ("", "C:/data/x.json")
    fs, inner = resolve("/tmp/x.json")
    assert isinstance(fs, pafs.LocalFileSystem) and inner == "/tmp/x.json"
    fs, inner = resolve("file:///tmp/a%20b.json")
    assert isinstance(fs, pafs.LocalFileSystem) and inner == "/tmp/a b.json"
    settings = {"fs.s3a.endpoint": "http://127.0.0.1:1", "fs.s3a.endpoint.region": "us-east-1"}
    for scheme in ("s3a", "s3", "s3n"):
        fs, inner = resolve(f"{scheme}://bucket/day=1/x.json", settings)
        assert isinstance(fs, pafs.S3FileSystem) and inner == "bucket/day=1/x.json"
    fs, inner = resolve(
        "abfss://box@acct.dfs.core.windows.net/dir/x.json",
        {"fs.azure.account.key.acct.dfs.core.windows.net": "a2V5"},
    )
    assert isinstance(fs, pafs.AzureFileSystem) and inner == "box/dir/x.json"
    # a path without a scheme: fs.defaultFS's filesystem, as Hadoop resolves it
    fs, inner = resolve("/bucket/x.json", dict(settings, **{"fs.defaultFS": "s3a://bucket0"}))
    assert isinstance(fs, pafs.S3FileSystem) and inner == "bucket0/bucket/x.json"
    fs, inner = resolve("/tmp/x.json", {"fs.defaultFS": "file:///"})
    assert isinstance(fs, pafs.LocalFileSystem) and inner == "/tmp/x.json"


def test_a_scheme_without_a_filesystem_is_named(monkeypatch):
    """fsspec is not a dependency: without it, a scheme pyarrow does not serve is refused."""
    monkeypatch.setitem(sys.modules, "fsspec", None)  # `import fsspec` raises ImportError
    with pytest.raises(OptionError, match="'ftp'.*install fsspec"):
        resolve("ftp://host/x.json")


def test_gs_settings_map_onto_pyarrow_options():
    """fs.gs.storage.root.url splits into pyarrow's scheme and host:port; calls give up after
    GCS_RETRY_SECONDS instead of pyarrow's 15 minutes; a root URL that is no http(s) URL is
    refused naming the key."""
    opts = gcs_options(
        {
            "fs.gs.storage.root.url": "http://127.0.0.1:4443",
            "fs.gs.auth.type": "unauthenticated",
            "fs.gs.project.id": "p1",
        }
    )
    assert opts["scheme"] == "http" and opts["endpoint_override"] == "127.0.0.1:4443"
    assert opts["anonymous"] is True and opts["project_id"] == "p1"
    assert opts["retry_time_limit"].total_seconds() == GCS_RETRY_SECONDS
    assert gcs_options({"fs.gs.storage.root.url": "storage.example.com"})["scheme"] == "https"
    assert "anonymous" not in gcs_options({"fs.gs.auth.type": "APPLICATION_DEFAULT"})
    with pytest.raises(OptionError, match="fs.gs.storage.root.url.*'ftp://x'"):
        gcs_options({"fs.gs.storage.root.url": "ftp://x"})
    fs, inner = resolve("gs://bucket/day=1/x.json", {"fs.gs.auth.type": "UNAUTHENTICATED"})
    assert isinstance(fs, pafs.GcsFileSystem) and inner == "bucket/day=1/x.json"
