"""GitHub-events-like NDJSON: nested records shaped like the GitHub Archive's event stream.

Each record is one event: ``id`` (a string of digits), ``type`` (skewed: mostly PushEvent,
then WatchEvent, CreateEvent, IssuesEvent, PullRequestEvent, ...), ``actor`` and ``repo``
structs (repository names skewed: a few hot repositories and a long tail), a ``payload`` whose
fields depend on the type (a push's ``commits`` is an array of structs with a nested
``author``; issues and pull requests carry a nested struct with a ``labels`` array and a body
text), ``public``, ``created_at`` ("2026-11-28T13:05:01Z") and, on some events, an ``org``
struct. Text fields hold JSON escapes (``\\n``, ``\\"``, ``\\\\``, ``\\u00e9``), non-ASCII
characters and emoji, written raw on most lines and as ``\\u`` escapes on every third.

Type drift, as real event streams have it: ``payload.push_id`` is a number on most pushes and a
string on some; ``actor.gravatar_id`` is sometimes null; ``org`` is present, null or missing;
``payload.issue.milestone`` is missing or null. ``malformed`` makes that fraction of the lines
broken JSON (cut short, or a bad token). Everything is deterministic for a given ``seed``.
"""

from __future__ import annotations

import gzip
import json
import os
import random
import zlib
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

#: A nested projection of the events as Spark DDL (5 fields, 3 of them nested).
GITHUB_EVENTS_DDL = (
    "repo STRUCT<name: STRING>, actor STRUCT<login: STRING>, payload STRUCT<size: BIGINT>, "
    "type STRING, created_at TIMESTAMP"
)

_EPOCH = datetime(2026, 11, 28, tzinfo=timezone.utc)
# Event types with their weights (roughly the GitHub Archive's mix).
_TYPES = (
    ("PushEvent", 50),
    ("WatchEvent", 12),
    ("CreateEvent", 10),
    ("IssueCommentEvent", 7),
    ("PullRequestEvent", 8),
    ("IssuesEvent", 5),
    ("ForkEvent", 4),
    ("DeleteEvent", 2),
    ("ReleaseEvent", 1),
    ("PublicEvent", 1),
)
_TYPE_NAMES = [name for name, _ in _TYPES]
_TYPE_WEIGHTS = [weight for _, weight in _TYPES]
_HOT_REPOS = ("torvalds/linux", "apache/spark", "apache/flink", "simdjson/simdjson")
_WORDS = (
    "fix",
    "add",
    "update",
    "remove",
    "refactor",
    "parser",
    "window",
    "state",
    "docs",
    "tests",
    "build",
    "café",
    "naïve",
    "Zürich",
    "日本語",
    "🚀",
    "✨",
    'the "fast" path',
    "C:\\temp",
    "tab\there",
)
_LABELS = ("bug", "enhancement", "documentation", "good first issue", "help wanted", "wontfix")
_ACTIONS = ("opened", "closed", "reopened", "labeled")


def _text(rng: random.Random, words: int) -> str:
    """A few words, with a line break now and then."""
    out = []
    for i in range(words):
        out.append(rng.choice(_WORDS))
        if i and i % 7 == 0:
            out.append("\n")
    return " ".join(out)


def _user(rng: random.Random, user_id: int) -> dict[str, Any]:
    login = f"user-{user_id}"
    return {
        "id": user_id,
        "login": login,
        "display_login": login,
        "gravatar_id": None if rng.random() < 0.2 else "",
        "url": f"https://api.github.com/users/{login}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user_id}?",
    }


def _repo(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.3:
        name = rng.choice(_HOT_REPOS)
        repo_id = 1000 + _HOT_REPOS.index(name)
    else:
        repo_id = int(rng.paretovariate(0.8) * 10_000)
        name = f"owner-{repo_id % 9973}/repo-{repo_id}"
    return {"id": repo_id, "name": name, "url": f"https://api.github.com/repos/{name}"}


def _sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(160):040x}"


def _labels(rng: random.Random) -> list[dict[str, Any]]:
    return [
        {
            "id": 100 + k,
            "name": name,
            "color": f"{zlib.crc32(name.encode()) & 0xFFFFFF:06x}",
            "default": k == 0,
        }
        for k, name in enumerate(rng.sample(_LABELS, rng.randrange(0, 4)))
    ]


def _issue(rng: random.Random, number: int, repo: dict[str, Any]) -> dict[str, Any]:
    issue: dict[str, Any] = {
        "id": 5_000_000 + number,
        "number": number,
        "title": _text(rng, rng.randrange(2, 6)).replace("\n", ""),
        "user": {"login": f"user-{rng.randrange(50_000)}", "id": rng.randrange(50_000)},
        "labels": _labels(rng),
        "state": rng.choice(("open", "closed")),
        "comments": rng.randrange(30),
        "body": _text(rng, rng.randrange(5, 40)),
        "html_url": f"https://github.com/{repo['name']}/issues/{number}",
    }
    roll = rng.random()
    if roll < 0.1:
        issue["milestone"] = {"title": f"v{number % 9}.0", "number": number % 9}
    elif roll < 0.2:
        issue["milestone"] = None
    return issue


def _payload(rng: random.Random, kind: str, repo: dict[str, Any]) -> dict[str, Any]:
    if kind == "PushEvent":
        size = rng.randrange(1, 6) if rng.random() < 0.9 else rng.randrange(6, 21)
        push_id: int | str = rng.randrange(10**9, 10**10)
        if rng.random() < 0.05:
            push_id = str(push_id)
        commits = [
            {
                "sha": _sha(rng),
                "author": {
                    "email": f"dev{rng.randrange(10_000)}@example.com",
                    "name": rng.choice(("Ana", "Zoë", "李雷", "Jürgen", 'Bob "B" Smith')),
                },
                "message": _text(rng, rng.randrange(2, 16)),
                "distinct": rng.random() < 0.95,
                "url": f"https://api.github.com/repos/{repo['name']}/commits/{_sha(rng)}",
            }
            for _ in range(min(size, 20))
        ]
        return {
            "push_id": push_id,
            "size": size,
            "distinct_size": sum(c["distinct"] for c in commits),
            "ref": "refs/heads/" + rng.choice(("main", "master", "dev", "feature/x")),
            "head": _sha(rng),
            "before": _sha(rng),
            "commits": commits,
        }
    if kind in ("IssuesEvent", "IssueCommentEvent"):
        number = rng.randrange(1, 50_000)
        payload: dict[str, Any] = {
            "action": rng.choice(_ACTIONS) if kind == "IssuesEvent" else "created",
            "issue": _issue(rng, number, repo),
        }
        if kind == "IssueCommentEvent":
            payload["comment"] = {"id": rng.randrange(10**9), "body": _text(rng, 8)}
        return payload
    if kind == "PullRequestEvent":
        number = rng.randrange(1, 50_000)
        return {
            "action": rng.choice(_ACTIONS),
            "number": number,
            "pull_request": {
                **_issue(rng, number, repo),
                "merged": rng.random() < 0.4,
                "additions": rng.randrange(2000),
                "deletions": rng.randrange(2000),
                "head": {"ref": "feature", "sha": _sha(rng)},
            },
        }
    if kind in ("CreateEvent", "DeleteEvent"):
        return {
            "ref": rng.choice(("main", "v1.0", "feature/y")),
            "ref_type": rng.choice(("branch", "tag")),
            "pusher_type": "user",
        }
    if kind == "ReleaseEvent":
        return {"action": "published", "release": {"tag_name": "v1.2.3", "body": _text(rng, 9)}}
    if kind == "ForkEvent":
        return {"forkee": {"id": rng.randrange(10**8), "full_name": f"fork/{repo['name']}"}}
    return {"action": "started"} if kind == "WatchEvent" else {}


def _malformed(rng: random.Random, line: str) -> str:
    """The line broken: cut short, a bad token, or a missing comma."""
    how = rng.randrange(3)
    if how == 0:
        return line[: rng.randrange(1, len(line) - 1)]
    if how == 1:
        return line.replace('"public":', '"public":x', 1)
    return line.replace(',"type"', ' "type"', 1)


def github_event_lines(
    n: int,
    *,
    seed: int = 7,
    malformed: float = 0.0,
    start: datetime = _EPOCH,
    events_per_second: int = 100,
) -> Iterator[str]:
    """Yields ``n`` GitHub-like event documents, one JSON object per string, in event-time
    order, ``events_per_second`` per second of event time from ``start``; the fraction
    ``malformed`` of them (chosen at random) is broken JSON.

    >>> lines = list(github_event_lines(3, seed=1))
    >>> [json.loads(line)["type"] for line in lines]
    ['PushEvent', 'WatchEvent', 'WatchEvent']
    >>> lines[0][:40]
    '{"id":"30000000000","type":"PushEvent","'
    """
    rng = random.Random(seed)
    step = timedelta(microseconds=1_000_000 // events_per_second)
    t = start
    for i in range(n):
        kind = rng.choices(_TYPE_NAMES, _TYPE_WEIGHTS)[0]
        repo = _repo(rng)
        actor_id = int(rng.paretovariate(1.0) * 1000)
        event: dict[str, Any] = {
            "id": str(30_000_000_000 + i),
            "type": kind,
            "actor": _user(rng, actor_id),
            "repo": repo,
            "payload": _payload(rng, kind, repo),
            "public": kind != "PublicEvent" or rng.random() < 0.5,
            "created_at": t.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        roll = rng.random()
        if roll < 0.25:
            org = repo["name"].split("/")[0]
            event["org"] = {
                "id": zlib.crc32(org.encode()) & 0xFFFFFF,
                "login": org,
                "url": f"/orgs/{org}",
            }
        elif roll < 0.3:
            event["org"] = None
        line = json.dumps(event, ensure_ascii=i % 3 == 2, separators=(",", ":"))
        if malformed and rng.random() < malformed:
            line = _malformed(rng, line)
        yield line
        t += step


def write_github_events(
    path: str | os.PathLike[str],
    n: int,
    *,
    seed: int = 7,
    files: int = 1,
    malformed: float = 0.0,
    gzip_files: bool = False,
    partitions: int = 0,
    events_per_second: int = 100,
) -> list[str]:
    """Writes ``n`` events (:func:`github_event_lines`) as NDJSON into ``files`` files under the
    folder ``path``, in event-time order, and returns their paths. ``gzip_files`` writes
    ``.json.gz`` files; ``partitions`` > 0 spreads the files over that many ``dt=YYYY-MM-DD``
    folders (one day each from 2026-11-28, files dealt round-robin), as partitioned archives
    lie on disk.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = write_github_events(d, 10, files=2, partitions=2, gzip_files=True)
    ...     [os.path.relpath(p, d) for p in paths]
    ['dt=2026-11-28/events-0000.json.gz', 'dt=2026-11-29/events-0001.json.gz']
    """
    os.makedirs(path, exist_ok=True)
    lines = github_event_lines(
        n, seed=seed, malformed=malformed, events_per_second=events_per_second
    )
    written = []
    per_file = -(-n // files)
    suffix = ".json.gz" if gzip_files else ".json"
    for k in range(files):
        folder = os.fspath(path)
        if partitions > 0:
            day = (_EPOCH + timedelta(days=k % partitions)).strftime("%Y-%m-%d")
            folder = os.path.join(folder, f"dt={day}")
            os.makedirs(folder, exist_ok=True)
        name = os.path.join(folder, f"events-{k:04d}{suffix}")
        opener = gzip.open if gzip_files else open
        with opener(name, "wt", encoding="utf-8", newline="\n") as f:
            for _ in range(max(0, min(per_file, n - k * per_file))):
                f.write(next(lines))
                f.write("\n")
        written.append(name)
    return written
