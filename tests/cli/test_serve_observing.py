"""`toolmesh serve` with serve.audit and serve.metrics: an audit file and a Prometheus endpoint of a real process."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import httpx2
import mcp
from mcp.client.stdio import StdioServerParameters

from _servers import ROOT, free_port, toolmesh_env

EXAMPLES = ROOT / "examples"
ENV = toolmesh_env()
SECRET = "notes-env-secret-0123456789"


async def test_serve_writes_one_audit_line_per_call_and_serves_metrics(tmp_path: Path) -> None:
    port = free_port()
    config = {
        "mcpServers": {
            "notes": {"command": "python", "args": [str(EXAMPLES / "notes_server.py")], "env": {"NOTES_KEY": SECRET}}
        },
        "native": [f"{EXAMPLES / 'tools.py'}:registry"],
        "policy": {"denyTools": ["notes__forget"]},
        "serve": {
            "audit": {"file": "logs/audit.jsonl", "arguments": True},
            "metrics": {"prometheus": {"port": port}},
        },
    }
    (tmp_path / "logs").mkdir()
    (tmp_path / "toolmesh.json").write_text(json.dumps(config), encoding="utf-8")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolmesh", "serve", "--transport", "stdio", "--config", str(tmp_path / "toolmesh.json")],
        env=ENV,
        cwd=str(tmp_path),
    )
    with anyio.fail_after(90):
        async with mcp.Client(params) as session:
            ok = await session.call_tool("forecast", {"city": "Oslo"})
            proxied = await session.call_tool("notes__search", {"query": SECRET})
            denied = await session.call_tool("notes__forget", {"title": "travel"})
            invalid = await session.call_tool("word_count", {"text": 3})
            async with httpx2.AsyncClient(timeout=30) as http:
                scraped = await http.get(f"http://127.0.0.1:{port}/metrics")
    assert not ok.is_error and not proxied.is_error and denied.is_error and invalid.is_error
    lines = (tmp_path / "logs" / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [(r["tool"], r["disposition"], r["error_kind"]) for r in records] == [
        ("forecast", "succeeded", None),
        ("notes__search", "succeeded", None),
        ("notes__forget", "failed", "not_found"),  # hidden by the policy: the profile has no such tool
        ("word_count", "failed", "invalid_arguments"),
    ]
    assert (records[1]["server"], records[1]["wire_name"]) == ("notes", "search")
    assert records[1]["arguments"] == '{"query":"***"}'
    assert all(r["profile"] == "default" for r in records)
    assert SECRET not in "".join(lines)
    assert scraped.status_code == 200
    assert "toolmesh_tool_call_duration_seconds_count{" in scraped.text
    assert 'error_type="invalid_arguments"' in scraped.text
    assert "toolmesh_mcp_server_up{" in scraped.text and SECRET not in scraped.text
