"""Specs for the hostile raw server (tests/hostile/servers/raw_server.py), over stdio and loopback HTTP."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from toolmesh.mcp import McpServer

RAW = Path(__file__).resolve().parent / "servers" / "raw_server.py"


def _raw_tools() -> tuple[str, ...]:
    spec = importlib.util.spec_from_file_location("hostile_raw_server", RAW)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return tuple(module.TOOLS)


RAW_TOOLS = _raw_tools()
"""The raw server's own tools, in its list order (the generated ones come after)."""

FAST = 10.0
"""Generous bound for answers that must come at once (the calls' own timeout is far longer)."""
CALL_TIMEOUT = 60.0
"""The calls' timeout in these tests: an answer near it would mean the bug is back."""


def raw_stdio(label: str = "raw", env: Mapping[str, str] | None = None, **options: Any) -> McpServer:
    """The raw server over stdio."""
    options.setdefault("call_timeout", CALL_TIMEOUT)
    options.setdefault("timeout", 30.0)
    child_env = {**os.environ, **(env or {})}
    return McpServer.stdio(label, sys.executable, [str(RAW), "stdio"], env=child_env, **options)


def raw_http(url: str, label: str = "rawweb", **options: Any) -> McpServer:
    """The raw server over Streamable HTTP at ``url``."""
    options.setdefault("call_timeout", CALL_TIMEOUT)
    options.setdefault("timeout", 30.0)
    return McpServer.http(label, url, **options)
