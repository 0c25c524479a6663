"""The session settings of the ``sliceflow.json`` source, and where each one comes from.

Spark plans a Python data source (``schema()``, ``reader()``, ``partitions()``,
``streamReader()``) in a Python worker that has no session, no ``TaskContext`` and no SQL
configuration: its runner passes none (measured on pyspark 4.3). The read tasks do see the
session's settings, though: Spark runs every query with the SQL confs that were set
explicitly (``SparkSession.builder.config``, ``spark.conf.set``) as local properties of its
jobs, and ``TaskContext.get().getLocalProperty(key)`` returns them in the Python worker. So
each setting is taken, first found first:

1. the per-read option (``.option("timeZone", ...)``, ``.option("fs.s3a.endpoint", ...)``: the
   options Spark's file sources take per read),
2. in a read task, the session conf as the task sees it (set explicitly: the query's own),
3. the value :func:`sliceflow.spark.register` captured from the session (``captured``),
4. Spark's default (the time zone: the process's local zone, as the JVM's default).

What the planner decides (the files listed, the splits, the inferred schema, the partition
column types, refusing a stream without schema) therefore follows the session only through
an option or ``register``; :data:`PLANNING_ONLY` names those settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from sliceflow._io.filesystems import hadoop_settings
from sliceflow.errors import OptionError
from sliceflow.spark.json.source_options import parse_bytes, parse_flag, pop_option

__all__ = [
    "CONFS",
    "DEFAULT_SPLIT_BYTES",
    "PLANNING_ONLY",
    "SourceSettings",
    "capture",
    "local_time_zone",
    "task_confs",
]

#: Split size when neither the option nor the session sets ``maxPartitionBytes``.
DEFAULT_SPLIT_BYTES = 128 << 20

#: The settings, by the name the source keeps them under: (Spark conf, per-read option or
#: None, Spark's default; None: computed).
CONFS: dict[str, tuple[str, str | None, str | None]] = {
    "timeZone": ("spark.sql.session.timeZone", "timeZone", None),
    "maxPartitionBytes": (
        "spark.sql.files.maxPartitionBytes",
        "maxPartitionBytes",
        str(DEFAULT_SPLIT_BYTES),
    ),
    "ignoreMissingFiles": ("spark.sql.files.ignoreMissingFiles", "ignoreMissingFiles", "false"),
    "ignoreCorruptFiles": ("spark.sql.files.ignoreCorruptFiles", "ignoreCorruptFiles", "false"),
    "partitionColumnTypeInference": (
        "spark.sql.sources.partitionColumnTypeInference.enabled",
        None,
        "true",
    ),
    "validatePartitionColumns": ("spark.sql.sources.validatePartitionColumns", None, "true"),
    "timestampType": ("spark.sql.timestampType", None, "TIMESTAMP_LTZ"),
    "caseSensitive": ("spark.sql.caseSensitive", None, "false"),
    "schemaInference": ("spark.sql.streaming.schemaInference", None, "false"),
}

#: The settings only the planner uses, so only an option or ``register`` can set them: the
#: split size, partition column typing, schema inference's timestamp type and case, a
#: stream's schema inference. (The time zone and the ``fs.*`` keys are used by both: the
#: planner's listing and ``modifiedBefore``/``After`` take them from an option or
#: ``register``, the read tasks also from the session.)
PLANNING_ONLY = (
    "maxPartitionBytes",
    "partitionColumnTypeInference",
    "timestampType",
    "caseSensitive",
    "schemaInference",
)


def local_time_zone() -> str:
    """The zone Spark's session time zone defaults to, the JVM's default: ``TZ``, else the
    system's zone (``/etc/timezone``, ``/etc/localtime``), else ``UTC``."""
    zone = os.environ.get("TZ", "").lstrip(":").strip()
    if zone:
        return zone
    try:
        with open("/etc/timezone", encoding="utf-8") as f:
            zone = f.read().strip()
    except OSError:
        zone = ""
    if zone:
        return zone
    target = os.path.realpath("/etc/localtime")
    marker = "/zoneinfo/"
    if marker in target:
        return target.split(marker, 1)[1]
    return "UTC"


def capture(conf: Mapping[str, str]) -> dict[str, str]:
    """What :func:`register` keeps of a session's configuration (``spark.conf.getAll``): the
    settings of :data:`CONFS` that are set, and the Hadoop ``fs.*`` keys."""
    captured = {name: str(conf[key]) for name, (key, _, _) in CONFS.items() if key in conf}
    captured.update(hadoop_settings(conf))
    return captured


def task_confs() -> dict[str, str]:
    """The session confs this process sees: a read task's local properties (the explicitly
    set SQL confs), in the form :func:`capture` gives; empty outside a task."""
    from pyspark import TaskContext

    context = TaskContext.get()
    if context is None:
        return {}
    properties: Mapping[str, str] = getattr(context, "_localProperties", None) or {}
    return capture(dict(properties))


@dataclass(frozen=True)
class SourceSettings:
    """The settings one read runs with (see the module docstring for where each comes from).

    ``given`` are the setting options the read named (taken out of its options),
    ``captured`` what ``register`` captured; :meth:`in_task` re-resolves with the task's view of
    the session.
    """

    given: dict[str, str] = field(default_factory=dict)
    captured: dict[str, str] = field(default_factory=dict)
    session: dict[str, str] = field(default_factory=dict)

    @classmethod
    def pop(cls, options: dict[str, str], captured: Mapping[str, str]) -> SourceSettings:
        """Takes the setting options (``timeZone``, ``maxPartitionBytes``, ``ignoreMissingFiles``,
        ``ignoreCorruptFiles``, ``fs.*`` Hadoop keys) out of ``options``; the planner's view."""
        given: dict[str, str] = {}
        for name, (_, option, _) in CONFS.items():
            if option is not None:
                value = pop_option(options, option)
                if value is not None:
                    given[name] = value
        for key in [k for k in options if k.lower().startswith("fs.")]:
            given[key] = options.pop(key)
        settings = cls(given, dict(captured))
        settings.check()
        return settings

    def in_task(self) -> SourceSettings:
        """The same settings with the read task's session confs (:func:`task_confs`)."""
        return SourceSettings(self.given, self.captured, task_confs())

    def check(self) -> None:
        """Refuses malformed values now (on the planner, as Spark refuses them when it plans)."""
        for name in ("ignoreMissingFiles", "ignoreCorruptFiles"):
            self.flag(name)
        if self.split_bytes <= 0:
            raise OptionError(
                f"maxPartitionBytes must be positive, got {self.get('maxPartitionBytes')!r}"
            )

    def get(self, name: str) -> str:
        for source in (self.given, self.session, self.captured):
            if name in source:
                return source[name]
        default = CONFS[name][2]
        return local_time_zone() if default is None else default

    def flag(self, name: str) -> bool:
        return parse_flag(name, self.get(name))

    @property
    def time_zone(self) -> str:
        return self.get("timeZone")

    @property
    def split_bytes(self) -> int:
        return parse_bytes(self.get("maxPartitionBytes"))

    @property
    def filesystem(self) -> dict[str, str]:
        """The Hadoop keys (``fs.*``) for the filesystems; a per-read option wins over the
        session's, key by key."""
        merged: dict[str, str] = {}
        for source in (self.captured, self.session, self.given):
            merged.update({k: v for k, v in source.items() if k.lower().startswith("fs.")})
        return merged
