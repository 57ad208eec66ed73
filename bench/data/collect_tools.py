"""Collect the benchmark catalog: the tools real MCP servers from npm list, without credentials.

Run:  .venv/bin/python bench/data/collect_tools.py [--out bench/data/tools.json] [--only LABEL ...]

Each server is started with ``npx -y PACKAGE@VERSION`` (the version resolved with ``npm view``
first), its npm cache a temporary folder, and connected with toolmesh over stdio; its tools are
listed, never called. A server that does not start or list within the time limit is reported and
left out. Writes ``{"packages": {label: "package@version"}, "tools": [...]}``, each tool with its
``name`` (``server__tool``), ``server``, ``tool`` (the server's own name), ``package``,
``description`` and ``inputSchema``, as ``bench/tool_search.py`` reads it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from toolmesh import McpServer, ToolRegistry

OUT = Path(__file__).resolve().parent / "tools.json"

# label -> (package, extra args after the package, extra env). Each starts and lists its tools without keys.
SERVERS: dict[str, tuple[str, list[str], dict[str, str]]] = {
    "everything": ("@modelcontextprotocol/server-everything", [], {}),
    "filesystem": ("@modelcontextprotocol/server-filesystem", ["{tmp}"], {}),
    "memory": ("@modelcontextprotocol/server-memory", [], {"MEMORY_FILE_PATH": "{tmp}/memory.jsonl"}),
    "thinking": ("@modelcontextprotocol/server-sequential-thinking", [], {}),
    "playwright": ("@playwright/mcp", ["--headless"], {}),
    "chrome_devtools": ("chrome-devtools-mcp", [], {}),
    "desktop_commander": ("@wonderwhy-er/desktop-commander", [], {}),
    "git": ("@cyanheads/git-mcp-server", [], {"MCP_TRANSPORT_TYPE": "stdio"}),
    "github": ("@modelcontextprotocol/server-github", [], {}),
    "puppeteer": ("@modelcontextprotocol/server-puppeteer", [], {"PUPPETEER_SKIP_DOWNLOAD": "1"}),
    "chart": ("@antv/mcp-server-chart", [], {}),
    "taskmanager": ("@kazuph/mcp-taskmanager", [], {}),
    "kubernetes": ("mcp-server-kubernetes", [], {}),
    "notion": ("@notionhq/notion-mcp-server", [], {}),
    "context7": ("@upstash/context7-mcp", [], {}),
    "pw_automation": ("@executeautomation/playwright-mcp-server", [], {"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}),
    "circleci": ("@circleci/mcp-server-circleci", [], {}),
    "gitlab": ("@zereight/mcp-gitlab", [], {}),
    "mastra_docs": ("@mastra/mcp-docs-server", [], {}),
    "code_runner": ("mcp-server-code-runner", [], {}),
    "sqlite": ("mcp-server-sqlite-npx", ["{tmp}/bench.db"], {}),
    "pubmed": ("@cyanheads/pubmed-mcp-server", [], {"MCP_TRANSPORT_TYPE": "stdio"}),
    "youtube_transcript": ("@kimtaeyoon83/mcp-server-youtube-transcript", [], {}),
    "commands": ("mcp-server-commands", [], {}),
}


def version(package: str, env: dict[str, str]) -> str:
    done = subprocess.run(
        ["npm", "view", package, "version"], capture_output=True, text=True, env=env, timeout=120, check=True
    )
    return done.stdout.strip().splitlines()[-1]


async def collect(label: str, package: str, args: list[str], extra: dict[str, str], tmp: str) -> list[dict[str, Any]]:
    env = {"npm_config_cache": f"{tmp}/npm-cache", "npm_config_update_notifier": "false"}
    env |= {key: value.format(tmp=tmp) for key, value in extra.items()}
    spec = McpServer.stdio(
        label,
        "npx",
        ["-y", package, *(arg.format(tmp=tmp) for arg in args)],
        env=env,
        cwd=tmp,
        stderr=f"{tmp}/{label}.stderr",
        timeout=300,
        max_description_chars=100_000,
    )
    async with ToolRegistry() as registry:
        await registry.connect(spec)
        tools = []
        for row in registry.snapshot(defer=False):
            definition = row.definition
            tools.append(
                {
                    "name": f"{label}__{row.wire_name}",  # type: ignore[union-attr]
                    "server": label,
                    "tool": row.wire_name,  # type: ignore[union-attr]
                    "package": package,
                    "description": definition.description,
                    "inputSchema": definition.parameters,
                }
            )
        return tools


async def main(args: argparse.Namespace) -> int:
    chosen = {label: SERVERS[label] for label in args.only} if args.only else SERVERS
    old: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {"packages": {}, "tools": []}
    packages: dict[str, str] = dict(old.get("packages", {}))
    tools: list[dict[str, Any]] = [tool for tool in old.get("tools", []) if tool["server"] not in chosen]
    with tempfile.TemporaryDirectory(prefix="toolmesh-bench-") as tmp:
        base = {**os.environ, "npm_config_cache": f"{tmp}/npm-cache"}
        limiter = anyio.CapacityLimiter(args.jobs)
        found: dict[str, list[dict[str, Any]]] = {}

        async def one(label: str) -> None:
            package, extra_args, extra_env = chosen[label]
            async with limiter:
                try:
                    pinned = f"{package}@{await anyio.to_thread.run_sync(version, package, base)}"
                    with anyio.fail_after(args.timeout):
                        listed = await collect(label, pinned, extra_args, extra_env, tmp)
                except Exception as error:  # a server that cannot list is left out, and said
                    print(f"  {label}: left out ({type(error).__name__}: {str(error)[:200]})", file=sys.stderr)
                    return
            for tool in listed:
                tool["package"] = pinned
            found[label] = listed
            packages[label] = pinned
            print(f"  {label}: {len(listed)} tools ({pinned})", file=sys.stderr)

        async with anyio.create_task_group() as group:
            for label in chosen:
                group.start_soon(one, label)
        write(args.out, packages, tools, found)  # before the temporary npm cache (large) is removed
    return 0


def write(out: Path, packages: dict[str, str], tools: list[dict[str, Any]], found: dict[str, Any]) -> None:
    for listed in found.values():
        tools.extend(listed)
    order = list(SERVERS)
    tools.sort(key=lambda tool: order.index(tool["server"]) if tool["server"] in order else len(order))
    packages = {
        label: packages[label] for label in sorted(packages, key=lambda s: order.index(s) if s in order else 99)
    }
    out.write_text(json.dumps({"packages": packages, "tools": tools}, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(tools)} tools of {len(packages)} servers -> {out}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=420)
    sys.exit(anyio.run(main, parser.parse_args()))
