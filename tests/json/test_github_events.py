"""sliceflow.testing's GitHub-events generator: deterministic by seed, the documented shapes
(nested structs, arrays of structs, escapes and non-ASCII text, type drift), the malformed
fraction, and the file writer's gzip and dt= partition options."""

from __future__ import annotations

import gzip
import json
import os

from sliceflow.testing import github_event_lines, write_github_events


def _parsed(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def test_same_seed_same_lines_other_seed_other_lines():
    assert list(github_event_lines(300, seed=3)) == list(github_event_lines(300, seed=3))
    assert list(github_event_lines(300, seed=3)) != list(github_event_lines(300, seed=4))
    # A prefix does not depend on how many lines are asked for.
    assert list(github_event_lines(50, seed=3)) == list(github_event_lines(300, seed=3))[:50]


def test_shapes():
    lines = list(github_event_lines(2000, seed=11))
    events = _parsed(lines)
    types = [e["type"] for e in events]
    assert types.count("PushEvent") > len(types) / 3  # skewed towards pushes
    assert {"WatchEvent", "IssuesEvent", "PullRequestEvent"} <= set(types)
    for e in events:
        assert e["id"].isdigit()
        assert set(e["actor"]) == {
            "id",
            "login",
            "display_login",
            "gravatar_id",
            "url",
            "avatar_url",
        }
        assert set(e["repo"]) == {"id", "name", "url"}
        assert isinstance(e["public"], bool)
        assert len(e["created_at"]) == 20 and e["created_at"].endswith("Z")
    pushes = [e["payload"] for e in events if e["type"] == "PushEvent"]
    commit = pushes[0]["commits"][0]
    assert set(commit) == {"sha", "author", "message", "distinct", "url"}
    assert set(commit["author"]) == {"email", "name"}
    issues = [e["payload"]["issue"] for e in events if e["type"] == "IssuesEvent"]
    assert any(issue["labels"] for issue in issues)
    assert all({"body", "labels", "number"} <= set(issue) for issue in issues)
    # Hot repositories and a long tail.
    names = [e["repo"]["name"] for e in events]
    assert names.count("apache/spark") > 20 and len(set(names)) > 500
    # Type drift: a number or a string, null or a value, present or missing.
    push_ids = {type(p["push_id"]) for p in pushes}
    assert push_ids == {int, str}
    assert {e["actor"]["gravatar_id"] is None for e in events} == {True, False}
    assert {"org" in e for e in events} == {True, False}
    assert any("org" in e and e["org"] is None for e in events)
    # Escapes and non-ASCII text, both raw and \u-escaped.
    text = "\n".join(lines)
    for escaped in ("\\n", '\\"', "\\\\", "\\u00e9", "\\ud83d\\ude80"):
        assert escaped in text, escaped
    assert "é" in text and "🚀" in text


def test_malformed_fraction():
    lines = list(github_event_lines(4000, seed=5, malformed=0.1))
    bad = 0
    for line in lines:
        try:
            json.loads(line)
        except ValueError:
            bad += 1
    assert 300 < bad < 500
    clean = list(github_event_lines(500, seed=5))
    assert all(json.loads(line) for line in clean)


def test_writer_files_gzip_partitions(tmp_path):
    plain = write_github_events(tmp_path / "plain", 25, files=3)
    assert [os.path.basename(p) for p in plain] == [
        "events-0000.json",
        "events-0001.json",
        "events-0002.json",
    ]
    text = "".join(open(p, encoding="utf-8").read() for p in plain)
    assert text == "".join(line + "\n" for line in github_event_lines(25))
    packed = write_github_events(tmp_path / "gz", 25, files=3, gzip_files=True, partitions=2)
    assert [os.path.relpath(p, tmp_path / "gz") for p in packed] == [
        "dt=2026-11-28/events-0000.json.gz",
        "dt=2026-11-29/events-0001.json.gz",
        "dt=2026-11-28/events-0002.json.gz",
    ]
    assert "".join(gzip.open(p, "rt", encoding="utf-8").read() for p in packed) == text
