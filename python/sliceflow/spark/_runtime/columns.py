"""The DataFrame columns an operator reads: finding them by the user's name, quoting them for
Spark, and the Arrow schema in which Spark hands them to Python.

Only the columns an aggregation uses travel to Python (each once). Type rules are
:mod:`sliceflow._runtime.spark_types`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sliceflow._runtime.spark_types import arrow_type

__all__ = [
    "ResolvedColumns",
    "input_schema",
    "name_parts",
    "quote",
    "resolve_columns",
    "resolver",
    "shown",
    "with_columns",
]


def quote(name: str) -> str:
    """``name`` as a Spark column reference (backquoted: dots and spaces are not paths)."""
    return "`" + name.replace("`", "``") + "`"


def resolver(df: DataFrame, case_sensitive: bool) -> Callable[[Any], Any]:
    """Maps a user's column name to the DataFrame's (Spark's case rules; top-level only).
    A name that is not a str, or that finds no single column, is returned as it is, for the
    plan builder to report."""
    names = df.columns

    def resolve(name: Any) -> Any:
        if not isinstance(name, str) or name in names or case_sensitive:
            return name
        matches = [n for n in names if n.lower() == name.lower()]
        return matches[0] if len(set(matches)) == 1 else name

    return resolve


def input_schema(
    df: DataFrame,
    referenced: Sequence[Any],
    time_zone: str,
    large_var: bool,
    operator: str = "sliceflow",
) -> pa.Schema:
    """The Arrow schema of the columns an operator reads (each once, in first-use order):
    only those travel to Python. With a missing or ambiguous column, every column (unsupported
    types as null), so that the plan builder reports the mistake against all of them. A
    column of a type no kernel takes is refused naming ``operator`` and the column."""
    used = list(dict.fromkeys(n for n in referenced if isinstance(n, str)))
    columns = df.columns
    if all(columns.count(name) == 1 for name in used):
        fields = {f.name: f for f in df.schema.fields}
        return pa.schema(
            [_arrow_field(fields[name], time_zone, large_var, operator) for name in used]
        )
    return _schema_for_errors(df, time_zone, large_var)


def _arrow_field(field: T.StructField, time_zone: str, large_var: bool, operator: str) -> pa.Field:
    dt = field.dataType
    if isinstance(dt, T.StringType):
        collation = getattr(dt, "collation", None) or "UTF8_BINARY"
        if collation != "UTF8_BINARY":
            raise ValueError(
                f"{operator}: column {field.name!r} has collation {collation}; sliceflow "
                "groups and compares strings bytewise (UTF8_BINARY) only"
            )
    try:
        return pa.field(field.name, arrow_type(dt, time_zone, large_var), field.nullable)
    except ValueError as e:
        raise ValueError(f"{operator}: column {field.name!r}: {e}") from None


def _schema_for_errors(df: DataFrame, time_zone: str, large_var: bool) -> pa.Schema:
    """An Arrow schema of every column (unsupported types as null), for build_plan's errors."""
    fields = []
    for f in df.schema.fields:
        try:
            t = arrow_type(f.dataType, time_zone, large_var)
        except ValueError:
            t = pa.null()
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)


# ---------------------------------------------------------------------------------------------
# Column arguments as Spark's DataFrame.groupBy / orderBy take them

#: How pyspark prints a Column (classic and Connect alike): ``Column<'repo.name'>``.
_PRINTED = re.compile(r"^Column<'(.*)'>$", re.S)


def shown(column: object) -> str:
    """How an error names a column argument: a name as given, a Column as pyspark prints it
    (``F.col("repo.name")``: ``repo.name``)."""
    if isinstance(column, str):
        return column
    printed = str(column)
    m = _PRINTED.match(printed)
    return m.group(1) if m else printed


def name_parts(name: str) -> list[str] | None:
    """A column name as Spark parses it in ``F.col(name)``: its parts, split at dots outside
    backquotes (``a.`b.c``` → ``["a", "b.c"]``); None when the name does not parse.

    >>> name_parts("repo.name"), name_parts("`a.b`"), name_parts("a + 1"), name_parts("a`b")
    (['repo', 'name'], ['a.b'], ['a + 1'], None)
    """
    parts: list[str] = []
    current: list[str] = []
    i, quoted = 0, False
    while i < len(name):
        ch = name[i]
        if quoted:
            if ch == "`" and name[i + 1 : i + 2] == "`":
                current.append("`")
                i += 1
            elif ch == "`":
                quoted = False
            else:
                current.append(ch)
        elif ch == "`":
            if current:
                return None
            quoted = True
        elif ch == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    if quoted:
        return None
    parts.append("".join(current))
    return parts if all(parts) else None


@dataclass(frozen=True)
class ResolvedColumns:
    """Column arguments resolved on a DataFrame: per argument, the name of a column of the
    DataFrame (or the argument as given, which no column matches, for the plan to report), the
    columns to add for the arguments that are expressions (a nested field, an alias, ``a + 1``:
    by the name Spark's ``groupBy`` gives them), and for each argument that is a Column, the
    text Spark shows for it inside an aggregate's name (``sum(<text>)``)."""

    names: list[Any]
    added: dict[str, Column]
    texts: dict[int, str]


def resolve_columns(
    df: DataFrame,
    refs: Sequence[Any],
    case_sensitive: bool,
    operator: str,
    added: Mapping[str, Column] | None = None,
    in_output: bool = True,
) -> ResolvedColumns:
    """Resolves column arguments as ``DataFrame.groupBy`` does: a name of a column (Spark's case
    rules; a name with dots that is a column's own name stays that column), a nested field
    (``"repo.name"``, ``F.col("repo.name")``) or any pyspark Column (``df.repo``,
    ``F.col("a").alias("r")``, ``F.col("a") + 1``). An expression other than a plain column is
    selected under the name Spark gives it (``repo.name`` → ``name``, ``repo AS r`` → ``r``),
    as ``groupBy`` names its output column. Spark analyses every expression once, on the
    driver: an expression it cannot resolve is a ``ValueError`` naming it (with Spark's reason),
    and one whose name is another column's (or another expression's) is a ``ValueError``
    that says to ``.alias`` it. ``added``: the expressions already added by this call.
    ``in_output=False`` (an aggregate's argument, never an output column): a name with dots
    (``df.repo.stars`` is ``repo.stars``), which PySpark's mapInArrow cannot read, is added
    with ``_`` for its dots (``repo_stars``)."""
    columns = df.columns
    lookup = resolver(df, case_sensitive)
    names: list[Any] = []
    pending: list[tuple[int, Column, str]] = []
    for i, ref in enumerate(refs):
        if isinstance(ref, str):
            name = lookup(ref)
            parts = name_parts(ref)
            if name in columns or parts is None or parts == [ref]:
                names.append(name)  # a column, or a name the plan reports as missing
                continue
            expr = F.col(ref)
        elif isinstance(ref, Column):
            expr = ref
        else:
            names.append(ref)  # not a column argument: the plan names its type
            continue
        names.append(None)
        pending.append((i, expr, shown(ref)))
    if not pending:
        return ResolvedColumns(names, {}, {})
    exprs = [e for _, e, _ in pending]
    try:
        selected = df.select(*exprs, *[F.coalesce(e) for e in exprs]).columns
    except AnalysisException:
        for _, expr, text in pending:
            _check_resolves(df, expr, text, operator)
        raise
    known = dict(added or {})
    new: dict[str, Column] = {}
    texts: dict[int, str] = {}

    def same_name(a: str, b: str) -> bool:
        return a == b if case_sensitive else a.lower() == b.lower()

    for k, (i, expr, text) in enumerate(pending):
        spark_name = selected[k]
        coalesced = selected[len(pending) + k]
        texts[i] = coalesced[len("coalesce(") : -1]
        parts = name_parts(text)
        if parts is not None and len(parts) == 1 and lookup(parts[0]) in columns:
            names[i] = lookup(parts[0])  # a plain column: F.col("repo"), df.repo, df["repo"]
            continue
        if not in_output and name_parts(spark_name) != [spark_name]:
            spark_name = spark_name.replace("`", "").replace(".", "_")
        if name_parts(spark_name) != [spark_name]:
            # PySpark's mapInArrow reads its input columns by name, which a dot or a backquote
            # turns into a path.
            raise ValueError(
                f"{operator}: the column {text!r} would be named {spark_name!r} (the name "
                "DataFrame.groupBy gives it), which PySpark's mapInArrow cannot read (a dot or "
                "a backquote); give it a name with .alias(...)"
            )
        earlier = next((n for n in {**known, **new} if same_name(n, spark_name)), None)
        if earlier is not None and shown(known.get(earlier, new.get(earlier))) == text:
            names[i] = earlier  # the same expression again
            continue
        if earlier is not None or any(same_name(c, spark_name) for c in columns):
            raise ValueError(
                f"{operator}: the column {text!r} is named {spark_name!r} in the output (the "
                f"name DataFrame.groupBy gives it), as another column is; give it a name of "
                f"its own with .alias(...), e.g. F.col({text!r}).alias('...')"
            )
        new[spark_name] = expr
        names[i] = spark_name
    return ResolvedColumns(names, new, texts)


def _check_resolves(df: DataFrame, expr: Column, text: str, operator: str) -> None:
    """A ``ValueError`` naming ``text`` (and Spark's reason) if Spark cannot resolve ``expr``."""
    try:
        df.select(expr).schema  # noqa: B018 (the analysis is the point)
    except AnalysisException as e:
        reason = str(e).split("\n")[0].split(" SQLSTATE")[0]
        raise ValueError(
            f"{operator}: the column {text!r} cannot be resolved on the DataFrame: {reason} "
            f"(columns: {', '.join(df.columns)})"
        ) from None


def with_columns(df: DataFrame, added: Mapping[str, Column]) -> DataFrame:
    """``df`` with the expression columns of :func:`resolve_columns` added after its own."""
    if not added:
        return df
    return df.select(F.col("*"), *[expr.alias(name) for name, expr in added.items()])
