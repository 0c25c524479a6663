"""The sliceflow.json source finds and opens files as spark.read.json does (local[2] Spark).

Listing rules (globs, lists of paths, hidden files, pathGlobFilter, recursiveFileLookup,
modifiedBefore/After, basePath), hive-style partition columns and their types, compressed
files by extension, and bad input (missing paths, damaged gzip, files gone after listing,
refused S3 credentials), each compared with spark.read.json where Spark has a behaviour. S3
runs against moto's S3 server on loopback (one per module), read through ``s3a://`` with the
session's ``spark.hadoop.fs.s3a.*`` settings; GCS against gcp-storage-emulator on loopback
through ``gs://`` with ``spark.hadoop.fs.gs.*``.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
import socket
import struct
import zlib

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

import sliceflow.spark as sfs
from sliceflow._io.listing import list_files, partition_fields
from sliceflow.spark.json.source import FileSplit, JsonDataSourceReader

pytestmark = pytest.mark.spark

SCHEMA = "a BIGINT, b STRING, c DOUBLE"


def _lines(first: int, count: int) -> bytes:
    return b"".join(
        b'{"a": %d, "b": "s%d", "c": %d.5}\n' % (i, i % 7, i) for i in range(first, first + count)
    )


def _hadoop_blocks(codec: str, data: bytes, block: int = 1 << 16) -> bytes:
    """Hadoop's BlockCompressorStream framing (Lz4Codec, SnappyCodec) around raw blocks."""
    out = []
    for i in range(0, len(data), block):
        raw = data[i : i + block]
        packed = pa.Codec(codec).compress(raw, asbytes=True)
        out.append(struct.pack(">II", len(raw), len(packed)) + packed)
    return b"".join(out)


CODEC_FILES = {
    "plain.json": lambda d: d,
    "g.json.gz": lambda d: gzip.compress(d[: len(d) // 2]) + gzip.compress(d[len(d) // 2 :]),
    "upper.json.GZ": gzip.compress,
    "b.json.bz2": bz2.compress,
    "z.json.zst": lambda d: pa.Codec("zstd").compress(d, asbytes=True),
    "z2.json.zstd": lambda d: pa.Codec("zstd").compress(d, asbytes=True),
    "d.json.deflate": zlib.compress,
    "l.json.lz4": lambda d: _hadoop_blocks("lz4_raw", d),
    "s.json.snappy": lambda d: _hadoop_blocks("snappy", d),
}


def _read(spark, path, schema=SCHEMA, **options):
    reader = spark.read.format("sliceflow.json").schema(schema).options(**options)
    return reader.load(path)


def _spark(spark, path, schema=SCHEMA, **options):
    return spark.read.schema(schema).options(**options).json(path)


def _rows(df):
    return sorted(df.collect(), key=repr)


def _same(ours, theirs):
    got, want = _rows(ours), _rows(theirs)
    assert len(got) == len(want)
    assert [repr(r) for r in got] == [repr(r) for r in want]  # repr: NaN equals NaN
    return got


@pytest.fixture(scope="module")
def registered(spark):
    sfs.register(spark)
    return spark


def test_every_codec_gives_spark_rows_and_compressed_files_are_one_split(registered, tmp_path):
    spark = registered
    for i, (name, pack) in enumerate(CODEC_FILES.items()):
        (tmp_path / name).write_bytes(pack(_lines(i * 1000, 1000)))
    ours = _read(spark, str(tmp_path), maxPartitionBytes="16384")
    rows = _same(ours, _spark(spark, str(tmp_path)))
    assert len(rows) == 1000 * len(CODEC_FILES)
    assert all(r.a is not None for r in rows)  # a .json.gz once came back as null rows

    reader = JsonDataSourceReader(
        {"path": str(tmp_path), "maxPartitionBytes": "16384"}, _schema(spark), {}
    )
    splits = reader.partitions()
    by_file = {}
    for split in splits:
        by_file.setdefault(os.path.basename(split.path), []).append(split)
    assert len(by_file["plain.json"]) > 1  # uncompressed: split on line boundaries
    for name in CODEC_FILES:
        if name != "plain.json":
            assert [(s.start, s.end) for s in by_file[name]] == [(0, None)], name


def _schema(spark, ddl=SCHEMA):
    return spark.createDataFrame([], ddl).schema


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """A folder with data files, hidden and metadata files, nested folders and old files."""
    root = tmp_path_factory.mktemp("tree")
    files = {
        "x1.json": _lines(0, 50),
        "x2.json.gz": gzip.compress(_lines(50, 50)),
        "sub/y1.json": _lines(100, 50),
        "sub/deeper/y2.txt": _lines(150, 50),
        "_SUCCESS": b"",
        "_metadata": _lines(900, 5),
        ".x1.json.crc": b"not json",
        "_tmp/z.json": _lines(910, 5),
        ".hidden/z.json": _lines(920, 5),
        "x3.json._COPYING_": _lines(930, 5),
        "old.json": _lines(200, 10),
        "sub/old/o.json": _lines(300, 10),
    }
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for old in ("old.json", "sub/old/o.json"):
        os.utime(root / old, (1_500_000_000, 1_500_000_000))  # 2017-07-14
    return root


@pytest.mark.parametrize(
    "paths, options",
    [
        (["."], {}),
        (["*.json*"], {}),
        (["sub/*/y?.txt", "x[12].json{,.gz}"], {}),
        (["x1.json", "sub"], {}),
        (["."], {"pathGlobFilter": "*.json"}),
        (["."], {"recursiveFileLookup": "true", "pathGlobFilter": "[yo]*"}),
        (["."], {"recursiveFileLookup": "true", "modifiedAfter": "2020-01-01T00:00:00"}),
        (["."], {"modifiedBefore": "2020-01-01T00:00:00"}),
        (["."], {"modifiedAfter": "2020-01-01T00:00:00"}),
        (["_metadata", "x1.json"], {}),
    ],
)
def test_listing_rules_read_spark_rows(registered, tree, paths, options):
    spark = registered
    full = [str(tree / p) if p != "." else str(tree) for p in paths]
    target = full[0] if len(full) == 1 else full
    ours = _read(spark, target, **options)
    theirs = spark.read.schema(SCHEMA).options(**options).json(target)
    assert _same(ours, theirs)  # and not empty


def test_missing_paths_fail_naming_the_path(registered, tree):
    spark = registered
    for target in (
        str(tree / "nope"),
        [str(tree / "x1.json"), str(tree / "nope2")],
        str(tree / "q*"),
    ):
        for options in ({}, {"ignoreMissingFiles": "true"}):
            name = target if isinstance(target, str) else target[1]
            with pytest.raises(Exception, match=r"PATH_NOT_FOUND.*" + name.replace("*", r"\*")):
                _read(spark, target, **options).collect()


def test_a_file_gone_after_listing_fails_or_is_skipped_with_ignore_missing(spark, tmp_path):
    (tmp_path / "keep.json").write_bytes(_lines(0, 3))
    (tmp_path / "gone.json.gz").write_bytes(gzip.compress(_lines(3, 3)))
    (tmp_path / "gone2.json").write_bytes(_lines(6, 3))
    schema = _schema(spark)
    strict = JsonDataSourceReader({"path": str(tmp_path)}, schema, {})
    lenient = JsonDataSourceReader(
        {"path": str(tmp_path), "ignoreMissingFiles": "true"}, schema, {}
    )
    splits = strict.partitions()
    os.remove(tmp_path / "gone.json.gz")
    os.remove(tmp_path / "gone2.json")
    rows = 0
    for split in splits:
        assert isinstance(split, FileSplit)
        if os.path.basename(split.path).startswith("gone"):
            with pytest.raises(FileNotFoundError, match=split.path.rsplit("/", 1)[-1]):
                list(strict.read(split))
            assert list(lenient.read(split)) == []
        else:
            rows += sum(b.num_rows for b in strict.read(split))
    assert rows == 3


def test_truncated_gzip_fails_naming_the_file_or_is_cut_with_ignore_corrupt(registered, tmp_path):
    spark = registered
    whole = gzip.compress(_lines(0, 200_000))
    (tmp_path / "bad.json.gz").write_bytes(whole[: len(whole) // 2])
    (tmp_path / "good.json").write_bytes(_lines(500_000, 10))
    with pytest.raises(Exception, match=r"bad\.json\.gz"):
        _read(spark, str(tmp_path)).collect()
    with pytest.raises(Exception, match=r"bad\.json\.gz"):  # Spark fails too
        _spark(spark, str(tmp_path)).collect()
    ours = _read(spark, str(tmp_path), ignoreCorruptFiles="true")
    theirs = _spark(spark, str(tmp_path), ignoreCorruptFiles="true")
    good = [r.a for r in ours.where("a >= 500000").collect()]
    assert sorted(good) == list(range(500_000, 500_010))
    # The rows of the damaged file before the damage, as Spark keeps them: a prefix of it,
    # whole lines only (how far each reader gets depends on its buffer sizes).
    cut = sorted(r.a for r in ours.where("a < 500000").collect())
    assert cut == list(range(len(cut)))
    assert 0 < len(cut) < 200_000
    assert abs(len(cut) - (theirs.count() - 10)) < 20_000


def _partition_tree(root, folders):
    for i, folder in enumerate(folders):
        path = root / folder
        path.mkdir(parents=True, exist_ok=True)
        (path / "part-0.json").write_bytes(_lines(i * 10, 2))


VALUE_SETS = [
    ["1", "2"],
    ["007"],
    ["3000000000", "1"],
    ["12345678901234567890123"],
    ["1.5", "1"],
    ["1e5"],
    ["2026-11-24", "2026-11-25"],
    ["2026-11-24 10%3A00%3A00", "2026-11-24"],
    ["abc", "007"],
    ["__HIVE_DEFAULT_PARTITION__", "4"],
    ["NaN", " 5", "1d"],
    ["2026-1-4", "true", "0x10"],
    ["1.5", "12345678901234567890123"],
    ["1", "2026-11-24"],
    ["a%2Fb", "c d"],
]


def test_partition_column_types_are_sparks(registered, tmp_path):
    spark = registered
    for i, values in enumerate(VALUE_SETS):
        root = tmp_path / f"t{i}"
        _partition_tree(root, [f"k={v}" for v in values])
        theirs = spark.read.json(str(root))  # Spark infers the partition column's type
        fields = partition_fields(list_files(str(root)))
        assert [f.name for f in fields] == ["k"]
        from sliceflow._runtime.spark_types import spark_type

        want = theirs.schema["k"].dataType
        got = spark_type(fields[0].type) if not pa.types.is_null(fields[0].type) else None
        assert (got or "void") == (want if want.simpleString() != "void" else "void"), values
        if want.simpleString() == "void":
            continue
        ddl = f"a BIGINT, b STRING, c DOUBLE, k {want.simpleString()}"
        _same(_read(spark, str(root), schema=ddl), theirs.select("a", "b", "c", "k"))


def test_partition_type_inference_off_reads_strings(registered, tmp_path):
    _partition_tree(tmp_path, ["k=007", "k=1.5"])
    fields = partition_fields(list_files(str(tmp_path)), type_inference=False)
    assert [(f.name, str(f.type)) for f in fields] == [("k", "string")]
    spark = registered
    spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
    try:
        theirs = spark.read.json(str(tmp_path))
        assert theirs.schema["k"].dataType.simpleString() == "string"
        _same(
            _read(spark, str(tmp_path), schema=SCHEMA + ", k STRING"),
            theirs.select("a", "b", "c", "k"),
        )
    finally:
        spark.conf.unset("spark.sql.sources.partitionColumnTypeInference.enabled")


def test_nested_partitions_with_a_user_schema_naming_them(registered, tmp_path):
    """Spark moves partition columns after the data columns; values and types as here."""
    spark = registered
    _partition_tree(
        tmp_path / "t", ["day=2026-11-24/h=1", "day=2026-11-25/h=2", "day=2026-11-25/h=10"]
    )
    (tmp_path / "t" / "day=2026-11-24" / "h=1" / "part-1.json").write_bytes(
        b'{"a": 99, "day": "not a date", "h": 7}\n'
    )
    root = str(tmp_path / "t")
    for ddl in (SCHEMA + ", day DATE, h INT", "h STRING, a BIGINT, day DATE, b STRING, c DOUBLE"):
        ours = _read(spark, root, schema=ddl)
        theirs = _spark(spark, root, schema=ddl)
        assert sorted(ours.columns) == sorted(theirs.columns)
        assert {f.name: f.dataType for f in ours.schema} == {
            f.name: f.dataType for f in theirs.schema
        }
        _same(ours, theirs.select(*ours.columns))
    # basePath: the partition folder given, its column still read
    sub = str(tmp_path / "t" / "day=2026-11-25")
    ddl = SCHEMA + ", day DATE, h INT"
    _same(
        _read(spark, sub, schema=ddl, basePath=root), _spark(spark, sub, schema=ddl, basePath=root)
    )
    # a glob over partition folders without basePath: Spark's conflicting-structure error
    with pytest.raises(Exception, match="CONFLICTING_DIRECTORY_STRUCTURES"):
        _read(spark, root + "/day=*", schema=ddl).collect()
    with pytest.raises(Exception, match="CONFLICTING_DIRECTORY_STRUCTURES"):
        _spark(spark, root + "/day=*", schema=ddl).collect()


def test_partition_columns_missing_from_the_schema_or_of_the_wrong_type_fail(registered, tmp_path):
    spark = registered
    _partition_tree(tmp_path, ["day=2026-11-24/h=1"])
    with pytest.raises(Exception, match=r"day DATE, h INT.*end of the schema"):
        _read(spark, str(tmp_path)).collect()
    with pytest.raises(Exception, match=r"INVALID_PARTITION_VALUE.*'2026-11-24'.*`day`"):
        _read(spark, str(tmp_path), schema=SCHEMA + ", day INT, h INT").collect()
    with pytest.raises(Exception, match=r"INVALID_PARTITION_VALUE.*'2026-11-24'.*`day`"):
        _spark(spark, str(tmp_path), schema=SCHEMA + ", day INT, h INT").collect()


# --- S3 (moto's server on loopback) -------------------------------------------------------


@pytest.fixture(scope="module")
def s3():
    """A moto S3 server on a free loopback port that checks signatures (IAM auth on after the
    three calls that make a user, its key and its policy); yields (endpoint, key, secret, fs)."""
    os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "3"
    import boto3
    from moto.server import ThreadedMotoServer

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    iam = boto3.client(
        "iam",
        endpoint_url=url,
        aws_access_key_id="setup",
        aws_secret_access_key="setup",
        region_name="us-east-1",
    )
    iam.create_user(UserName="reader")
    key = iam.create_access_key(UserName="reader")["AccessKey"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
    }
    iam.put_user_policy(UserName="reader", PolicyName="all", PolicyDocument=json.dumps(policy))
    fs = pafs.S3FileSystem(
        access_key=key["AccessKeyId"],
        secret_key=key["SecretAccessKey"],
        endpoint_override=url,
        scheme="http",
        region="us-east-1",
        allow_bucket_creation=True,
    )
    fs.create_dir("bucket")
    yield f"127.0.0.1:{port}", key["AccessKeyId"], key["SecretAccessKey"], fs
    server.stop()


def _s3_settings(s3, **extra):
    endpoint, key, secret, _ = s3
    settings = {
        "spark.hadoop.fs.s3a.endpoint": endpoint,
        "spark.hadoop.fs.s3a.access.key": key,
        "spark.hadoop.fs.s3a.secret.key": secret,
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.attempts.maximum": "1",
    }
    settings.update({f"spark.hadoop.fs.s3a.{k.replace('_', '.')}": v for k, v in extra.items()})
    return settings


def _with_settings(spark, settings):
    for key, value in settings.items():
        spark.conf.set(key, value)
    sfs.register(spark)


def _without_settings(spark, settings):
    for key in settings:
        spark.conf.unset(key)
    sfs.register(spark)


def test_s3a_reads_the_rows_of_the_local_copy(registered, tmp_path, s3):
    spark = registered
    fs = s3[3]
    local = tmp_path / "t"
    files = {
        f"day=2026-11-2{i}/{name}": pack(_lines(i * 1000, 300))
        for i, (name, pack) in enumerate(CODEC_FILES.items())
    }
    files["_SUCCESS"] = b""
    for name, data in files.items():
        (local / name).parent.mkdir(parents=True, exist_ok=True)
        (local / name).write_bytes(data)
        with fs.open_output_stream(f"bucket/t/{name}", compression=None) as out:
            out.write(data)
    settings = _s3_settings(s3)
    ddl = SCHEMA + ", day DATE"
    _with_settings(spark, settings)
    try:
        remote = _read(spark, "s3a://bucket/t", schema=ddl, maxPartitionBytes="8192")
        rows = _same(remote, _spark(spark, str(local), schema=ddl))  # the local copy's rows
        assert len(rows) == 300 * len(CODEC_FILES)
        glob = _read(
            spark,
            ["s3a://bucket/t/day=2026-11-2[01]/*", "s3://bucket/t/day=2026-11-22"],
            schema=SCHEMA,
        )
        assert glob.count() == 900
        with pytest.raises(Exception, match=r"PATH_NOT_FOUND.*s3a://bucket/nope"):
            _read(spark, "s3a://bucket/nope").collect()
    finally:
        _without_settings(spark, settings)


def test_s3a_refused_credentials_fail_naming_the_path(registered, s3):
    """A wrong secret, an unknown key: the listing call is refused, the error names the path;
    a valid key on a bucket that does not exist: PATH_NOT_FOUND."""
    spark = registered
    with s3[3].open_output_stream("bucket/creds/x.json", compression=None) as out:
        out.write(_lines(0, 3))
    for extra, pattern in (
        ({"secret_key": "wrong"}, r"s3a://bucket/creds.*(SIGNATURE|ACCESS_DENIED)"),
        (
            {"access_key": "AKIANOBODY", "secret_key": "x"},
            r"s3a://bucket/creds.*(ACCESS_DENIED|INVALID_ACCESS)",
        ),
    ):
        settings = _s3_settings(s3, **extra)
        _with_settings(spark, settings)
        try:
            with pytest.raises(Exception, match=pattern):
                _read(spark, "s3a://bucket/creds").collect()
        finally:
            _without_settings(spark, settings)
    settings = _s3_settings(s3)
    _with_settings(spark, settings)
    try:
        assert _read(spark, "s3a://bucket/creds").count() == 3
        with pytest.raises(Exception, match=r"s3a://no-such-bucket/t"):
            _read(spark, "s3a://no-such-bucket/t").collect()
    finally:
        _without_settings(spark, settings)


# --- GCS (gcp-storage-emulator's server on loopback) -----------------------------------------


@pytest.fixture(scope="module")
def gcs():
    """A GCS JSON API emulator on a free loopback port with a bucket ``bucket``; yields the
    session settings that point ``gs://`` at it and a pyarrow filesystem to fill it."""
    from gcp_storage_emulator.server import create_server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = create_server("127.0.0.1", port, in_memory=True, default_bucket="bucket")
    server.start()
    settings = {
        "spark.hadoop.fs.gs.storage.root.url": f"http://127.0.0.1:{port}/",
        "spark.hadoop.fs.gs.auth.type": "UNAUTHENTICATED",
        "spark.hadoop.fs.gs.project.id": "test",
    }
    fs = pafs.GcsFileSystem(anonymous=True, scheme="http", endpoint_override=f"127.0.0.1:{port}")
    yield settings, fs
    server.stop()


def test_gs_reads_the_rows_of_the_local_copy(registered, tmp_path, gcs):
    """The same partitioned tree of compressed and plain files, read through ``gs://`` from the
    emulator with the ``spark.hadoop.fs.gs.*`` settings, gives spark.read.json's rows of the
    local copy, with a schema and inferred; a missing path is Spark's PATH_NOT_FOUND."""
    spark = registered
    settings, fs = gcs
    local = tmp_path / "t"
    codecs = ("plain.json", "g.json.gz", "z.json.zst", "l.json.lz4")
    files = {
        f"day=2026-11-2{i}/{name}": CODEC_FILES[name](_lines(i * 1000, 200))
        for i, name in enumerate(codecs)
    }
    for name, data in files.items():
        (local / name).parent.mkdir(parents=True, exist_ok=True)
        (local / name).write_bytes(data)
        with fs.open_output_stream(f"bucket/t/{name}", compression=None) as out:
            out.write(data)
    ddl = SCHEMA + ", day DATE"
    _with_settings(spark, settings)
    try:
        remote = _read(spark, "gs://bucket/t", schema=ddl, maxPartitionBytes="4096")
        assert len(_same(remote, _spark(spark, str(local), schema=ddl))) == 200 * len(codecs)
        inferred = spark.read.format("sliceflow.json").load("gs://bucket/t")
        assert inferred.schema == spark.read.json(str(local)).schema
        _same(inferred, spark.read.json(str(local)))
        assert _read(spark, "gs://bucket/t/day=2026-11-2[01]/*").count() == 400
        with pytest.raises(Exception, match=r"PATH_NOT_FOUND.*gs://bucket/nope"):
            _read(spark, "gs://bucket/nope").collect()
    finally:
        _without_settings(spark, settings)
