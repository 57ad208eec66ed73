"""AuditLog: one JSON line per call, whatever its disposition, with no configured secret in it."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import uuid
from pathlib import Path

import anyio

from _audit import Audited, audit_logger
from _calls import call
from _mcp import demo_stdio
from toolmesh import ErrorKind, ToolExecutionError, ToolRegistry, run_tool_calls
from toolmesh.hooks import AuditLog, CallObserver, CallRecord, audit_file_handler
from toolmesh.policy import DenyTools

SERVER_SECRET = "env-secret-0123456789"
BEARER = "bearer-token-abcdefghij"


def natives(registry: ToolRegistry) -> None:
    @registry.tool
    async def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    @registry.tool
    async def refuse_politely() -> str:
        """Fails on purpose."""
        raise ToolExecutionError("not for you", kind=ErrorKind.PERMISSION_DENIED)

    @registry.tool
    async def boom() -> str:
        """Fails unexpectedly."""
        raise RuntimeError(f"broke with {SERVER_SECRET}")


async def test_one_line_per_call_for_every_disposition_without_secrets(
    audit_lines: Audited,
) -> None:
    logger, lines = audit_lines
    async with ToolRegistry() as registry:
        natives(registry)
        await registry.connect(demo_stdio("demo", env={"DEMO_API_KEY": SERVER_SECRET}))
        audit = AuditLog(logger, include_arguments=True, secrets=[BEARER], rows=registry.get)
        calls = [
            call("c1", "add", a=1, b=2),
            call("c2", "refuse_politely"),
            call("c3", "boom"),
            call("c4", "demo__fail", reason="upstream said no"),
            call("c5", "demo__delete_item", item_id="x"),
            call("c6", "no_such_tool", q=1),
            call("c7", "demo__echo", text=f"{SERVER_SECRET} and {BEARER}"),
        ]
        with anyio.fail_after(30):
            turn = await run_tool_calls(registry, calls, hooks=[audit, DenyTools("demo__delete_item")])
    assert [r.disposition.value for r in turn] == [
        "succeeded", "failed", "failed", "failed", "refused", "failed", "succeeded"
    ]  # fmt: skip
    found = {line["call_id"]: line for line in lines.records()}
    assert sorted(found) == ["c1", "c2", "c3", "c4", "c5", "c6", "c7"]
    assert (found["c1"]["disposition"], found["c1"]["error_kind"], found["c1"]["kind"]) == ("succeeded", None, "native")
    assert found["c1"]["arguments"] == '{"a":1,"b":2}'
    assert found["c1"]["arguments_sha256"] == hashlib.sha256(b'{"a":1,"b":2}').hexdigest()
    assert (found["c2"]["disposition"], found["c2"]["error_kind"]) == ("failed", "permission_denied")
    assert (found["c3"]["disposition"], found["c3"]["error_kind"]) == ("failed", "internal")
    upstream = found["c4"]
    assert (upstream["tool"], upstream["wire_name"], upstream["server"]) == ("demo__fail", "fail", "demo")
    assert (upstream["disposition"], upstream["kind"]) == ("failed", "mcp")
    assert upstream["error_kind"] == "upstream_error"
    refused = found["c5"]
    assert (refused["disposition"], refused["error_kind"], refused["duration_ms"]) == ("refused", "refused", 0)
    assert (refused["wire_name"], refused["server"]) == ("delete_item", "demo")  # found through rows=registry.get
    unknown = found["c6"]
    assert (unknown["tool"], unknown["kind"], unknown["error_kind"]) == ("no_such_tool", "unknown", "not_found")
    assert unknown["server"] is None
    echoed = found["c7"]
    assert echoed["arguments"] == '{"text":"*** and ***"}'
    assert echoed["arguments_sha256"] == hashlib.sha256(b'{"text":"*** and ***"}').hexdigest()
    for line in lines.lines:
        assert SERVER_SECRET not in line and BEARER not in line
        assert "Error executing" not in line and "broke with" not in line and "not for you" not in line  # no error text
        record = json.loads(line)
        assert record["profile"] is None and record["subject"] is None and record["client_id"] is None
        assert record["time"].endswith("Z") and record["duration_ms"] >= 0


async def test_the_arguments_are_hashed_only_unless_asked(audit_lines: Audited) -> None:
    logger, lines = audit_lines
    async with ToolRegistry() as registry:
        natives(registry)
        await run_tool_calls(registry, [call("c1", "add", a=40, b=2)], hooks=[AuditLog(logger)])
    (line,) = lines.records()
    assert "arguments" not in line
    assert line["arguments_sha256"] == hashlib.sha256(b'{"a":40,"b":2}').hexdigest()


async def test_a_jwt_in_the_arguments_is_starred_out_before_it_is_written_or_hashed(audit_lines: Audited) -> None:
    logger, lines = audit_lines
    token = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLWJ5dGVz"
    async with ToolRegistry() as registry:

        @registry.tool
        async def note(text: str, ref: str) -> str:
            """Keep a note."""
            return text

        calls = [call("c1", "note", text=f"use Bearer {token} for it", ref="eyJ-not-a-token")]
        await run_tool_calls(registry, calls, hooks=[AuditLog(logger, include_arguments=True)])
    (line,) = lines.records()
    written = '{"ref":"eyJ-not-a-token","text":"use Bearer *** for it"}'
    assert line["arguments"] == written
    assert line["arguments_sha256"] == hashlib.sha256(written.encode()).hexdigest()
    assert token not in lines.lines[0] and token.split(".")[1] not in lines.lines[0]


async def test_a_call_cancelled_while_it_runs_is_recorded_as_cancelled(
    audit_lines: Audited,
) -> None:
    logger, lines = audit_lines
    started = anyio.Event()
    registry = ToolRegistry()

    @registry.tool
    async def wait_forever() -> str:
        """Never ends."""
        started.set()
        await anyio.sleep_forever()
        return "unreachable"

    async def turn() -> None:
        await run_tool_calls(registry, [call("c1", "wait_forever")], hooks=[AuditLog(logger)])

    async with registry, anyio.create_task_group() as group:
        group.start_soon(turn)
        with anyio.fail_after(10):
            await started.wait()
        group.cancel_scope.cancel()
    (line,) = lines.records()
    assert (line["call_id"], line["disposition"], line["error_kind"]) == ("c1", "cancelled", "cancelled")
    assert line["duration_ms"] >= 0


async def test_nothing_is_made_while_the_logger_is_off() -> None:
    made: list[CallRecord] = []

    class Counting(AuditLog):
        def record(self, record: CallRecord) -> None:
            made.append(record)
            super().record(record)

    with audit_logger(logging.WARNING) as (logger, lines):
        async with ToolRegistry() as registry:
            natives(registry)
            await run_tool_calls(registry, [call("c1", "add", a=1, b=1)], hooks=[Counting(logger)])
    assert made == [] and lines.lines == []  # not even a record is made


async def test_a_file_handler_follows_logrotate(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    logger = logging.getLogger(f"test.audit.file.{uuid.uuid4().hex}")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = audit_file_handler(path)
    logger.addHandler(handler)
    try:
        async with ToolRegistry() as registry:
            natives(registry)
            audit = AuditLog(logger)
            await run_tool_calls(registry, [call("c1", "add", a=1, b=1)], hooks=[audit])
            os.rename(path, tmp_path / "audit.jsonl.1")  # what logrotate does (no copytruncate)
            await run_tool_calls(registry, [call("c2", "add", a=1, b=1)], hooks=[audit])
    finally:
        logger.removeHandler(handler)
        handler.close()
    rotated = (tmp_path / "audit.jsonl.1").read_text().splitlines()
    fresh = path.read_text().splitlines()
    assert [json.loads(line)["call_id"] for line in rotated] == ["c1"]
    assert [json.loads(line)["call_id"] for line in fresh] == ["c2"]


def test_an_observer_copy_for_a_profile_shares_its_output() -> None:
    logger = logging.getLogger("test.audit.copy")
    audit = AuditLog(logger, include_arguments=True)
    bound = audit.for_profile("reader")
    assert isinstance(bound, CallObserver)
    assert (bound.profile, bound.logger, bound.include_arguments) == ("reader", logger, True)
    assert audit.profile is None
