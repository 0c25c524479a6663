"""Where the sliceflow.json source takes each session setting from (no Spark: the read task's
local properties are faked): the option, else the task's session confs, else what register()
captured, else Spark's default."""

from __future__ import annotations

import pytest
from pyspark import TaskContext

from sliceflow.errors import OptionError
from sliceflow.spark.json.source_settings import (
    DEFAULT_SPLIT_BYTES,
    SourceSettings,
    capture,
    local_time_zone,
)


class _Task:
    def __init__(self, properties: dict[str, str]) -> None:
        self._localProperties = properties

    def getLocalProperty(self, key: str) -> str | None:
        return self._localProperties.get(key)


def test_the_option_wins_then_the_task_then_register_then_the_default(monkeypatch):
    captured = capture(
        {
            "spark.sql.session.timeZone": "Europe/Paris",
            "spark.sql.files.maxPartitionBytes": "1m",
            "spark.hadoop.fs.s3a.endpoint": "http://captured",
            "spark.hadoop.fs.s3a.region": "eu-west-3",
            "spark.app.name": "not a setting",
        }
    )
    assert captured == {
        "timeZone": "Europe/Paris",
        "maxPartitionBytes": "1m",
        "fs.s3a.endpoint": "http://captured",
        "fs.s3a.region": "eu-west-3",
    }
    options = {"path": "/x", "timezone": "Asia/Tokyo", "fs.s3a.endpoint": "http://option"}
    planner = SourceSettings.pop(options, captured)
    assert options == {"path": "/x"}  # the setting options are taken out
    assert planner.time_zone == "Asia/Tokyo"
    assert planner.split_bytes == 1 << 20
    assert planner.filesystem == {"fs.s3a.endpoint": "http://option", "fs.s3a.region": "eu-west-3"}
    assert planner.in_task().session == {}  # no task: nothing more

    session = {
        "spark.sql.session.timeZone": "America/New_York",
        "spark.sql.files.ignoreMissingFiles": "true",
        "spark.hadoop.fs.s3a.region": "us-east-1",
    }
    monkeypatch.setattr(TaskContext, "get", classmethod(lambda cls: _Task(session)))
    task = planner.in_task()
    assert task.time_zone == "Asia/Tokyo"  # the option still wins
    assert task.flag("ignoreMissingFiles")  # the session's, set after register()
    assert task.filesystem == {"fs.s3a.endpoint": "http://option", "fs.s3a.region": "us-east-1"}
    unset = SourceSettings.pop({}, {}).in_task()
    assert unset.time_zone == "America/New_York"
    assert unset.flag("validatePartitionColumns")
    assert unset.split_bytes == DEFAULT_SPLIT_BYTES
    assert unset.flag("schemaInference") is False


def test_the_default_zone_is_the_processs(monkeypatch):
    monkeypatch.setenv("TZ", "Australia/Sydney")
    assert local_time_zone() == "Australia/Sydney"
    assert SourceSettings.pop({}, {}).time_zone == "Australia/Sydney"
    monkeypatch.delenv("TZ")
    assert local_time_zone()  # the system's zone, else UTC


def test_malformed_settings_are_refused_when_planning():
    with pytest.raises(OptionError, match="'ignoreMissingFiles' must be true or false"):
        SourceSettings.pop({"ignoremissingfiles": "yes"}, {})
    with pytest.raises(OptionError, match="maxPartitionBytes must be positive"):
        SourceSettings.pop({"maxpartitionbytes": "0"}, {})
