"""`toolmesh serve` as a real process taking OAuth access tokens: toolmesh.json's serve.auth.oauth (with a CA file)
and policy.callers, met by the official MCP client's OAuth flow against a real authorization server."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import httpx2
import mcp
from anyio.streams.text import TextReceiveStream
from mcp.client.streamable_http import streamable_http_client

from _authserver import AuthServer, oauth_client, running_auth_server, tls
from _oauth_gateway import free_port
from _servers import stop_process, toolmesh_env

ENV = toolmesh_env()
TOOLS = '''
from toolmesh import ToolContext, tool


@tool
async def whoami(ctx: ToolContext) -> str:
    """Say who called."""
    return ctx.identity.subject if ctx.identity is not None else "nobody"


tools = [whoami]
'''


async def test_toolmesh_serve_takes_access_tokens_and_applies_caller_rules(tmp_path: Path) -> None:
    certs = tls(tmp_path)
    server = AuthServer(users={"alice": {"mcp"}}, login="alice")
    (tmp_path / "tools.py").write_text(TOOLS, encoding="utf-8")
    async with running_auth_server(server, certs) as issuer:
        port = free_port()
        oauth = {"issuer": issuer, "resource": f"http://127.0.0.1:{port}/mcp", "jwksUri": issuer + "/jwks.json"}
        config = {
            "native": ["tools.py:tools"],
            "policy": {"callers": [{"subjects": ["alice"], "rateLimit": {"calls": 1, "per": 3600}}]},
            "serve": {"port": port, "auth": {"oauth": {**oauth, "scopes": ["mcp"], "caFile": "ca.pem"}}},  # by tls()
        }
        (tmp_path / "toolmesh.json").write_text(json.dumps(config), encoding="utf-8")
        command = [sys.executable, "-m", "toolmesh", "serve", "--config", str(tmp_path / "toolmesh.json")]
        process = await anyio.open_process(command, env=ENV, cwd=tmp_path, stderr=subprocess.DEVNULL)
        try:
            assert process.stdout is not None
            seen = ""
            with anyio.fail_after(90):
                async for text in TextReceiveStream(process.stdout):
                    seen += text
                    if "stop with Ctrl-C" in seen:
                        break
            assert f"auth: OAuth access tokens of {issuer}" in seen
            # fetched before the upstream servers start, and not again when the gateway listens
            assert server.hits["/.well-known/oauth-authorization-server"] == 1 and server.hits["/jwks.json"] == 1
            url = f"http://127.0.0.1:{port}/mcp"
            http = httpx2.AsyncClient(auth=oauth_client(url, certs.trust), verify=certs.trust, timeout=60)
            async with mcp.Client(streamable_http_client(url, http_client=http)) as client:
                with anyio.fail_after(60):
                    first = await client.call_tool("whoami", {})
                    second = await client.call_tool("whoami", {})
            process.send_signal(signal.SIGTERM)
            with anyio.fail_after(60):
                assert await process.wait() == 0
        finally:
            await stop_process(process)
    assert first.content[0].text == "alice"  # type: ignore[union-attr]
    assert second.is_error and "rate limited" in second.content[0].text  # type: ignore[union-attr]  # alice's bucket
