"""Run the official MCP conformance suite (@modelcontextprotocol/conformance) and read its verdict.

    verdict = await run_suite("client", "--command", client_command(), "--scenario", "initialize", out=tmp_path)
    assert verdict.passed(), verdict.explain()

`make install` puts the suite and the Node 22 it needs into .conformance/
(scripts/install_conformance.sh). Node runs with tests/conformance/loopback.cjs preloaded,
so the suite's scenario servers listen on 127.0.0.1 only. The suite writes each scenario's
checks to `<out>/<scenario>-<time>/checks.json`; the verdict is read from there and from
its exit code. The node process runs in its own process group, which is killed when the
run ends, so nothing it started outlives the test.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Collection
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
PREFIX = ROOT / ".conformance"
SUITE = PREFIX / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
PRELOAD = ROOT / "tests" / "conformance" / "loopback.cjs"
CLIENT = ROOT / "tests" / "conformance" / "client.py"

SUITE_TIMEOUT = 200.0
"""Seconds one run of the suite may take: generous (a busy 2-core machine is slow to start Python and
Node), and under the tests' own pytest timeout (``PYTEST_TIMEOUT``) so the run is stopped by its handle."""
PYTEST_TIMEOUT = 300
"""The pytest timeout of the conformance tests (their module fixtures start servers and run the suite)."""
CLIENT_TIMEOUT_MS = 120_000
"""How long the suite lets the client program run before it kills it (its default is 30 s)."""


def node() -> str | None:
    """The Node >= 22 that runs the suite: .conformance's own, else one on PATH; None when there is none."""
    local = PREFIX / "node_modules" / ".bin" / "node"
    for candidate in (str(local) if local.exists() else None, shutil.which("node")):
        if candidate is None:
            continue
        found = subprocess.run([candidate, "--version"], capture_output=True, text=True, check=False).stdout
        if found.startswith("v") and int(found[1:].split(".")[0]) >= 22:
            return candidate
    return None


def missing() -> str | None:
    """Why the suite cannot run here, or None when it can."""
    if not SUITE.exists():
        return f"the conformance suite is not installed ({SUITE}): run scripts/install_conformance.sh (make install)"
    if node() is None:
        return "no Node >= 22 in .conformance/ or on PATH: run scripts/install_conformance.sh (make install does)"
    return None


def client_command() -> str:
    """`--command` for client mode: this interpreter running tests/conformance/client.py.

    The suite splits the command on spaces and hands it to a shell, which joins it again, so
    shell quoting survives paths with spaces.
    """
    return shlex.join([sys.executable, str(CLIENT)])


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the suite said about one scenario."""

    scenario: str
    exit_code: int | None
    """The suite's exit code for a run of this scenario alone (0: it passed); None when the run held many."""
    checks: list[dict[str, Any]]
    """Its checks (``id``, ``status``: SUCCESS, FAILURE, WARNING or INFO, ``errorMessage``, ``details``)."""
    output: str
    """Everything the suite printed, for the failure message."""

    def ids(self, status: str) -> set[str]:
        """The ids of the checks with this status."""
        return {check["id"] for check in self.checks if check["status"] == status}

    def passed(self, required: Collection[str] = (), tolerated: Collection[str] = ()) -> bool:
        """The suite passed it: every ``required`` check succeeded (at least one did), none failed or warned.

        ``tolerated`` names checks whose WARNING (never FAILURE) is accepted; then the suite's
        non-zero exit code is accepted when those warnings are all that is wrong.
        """
        warned = self.ids("WARNING")
        succeeded = self.ids("SUCCESS")
        if self.ids("FAILURE") or warned - set(tolerated) or not succeeded or not set(required) <= succeeded:
            return False
        return self.exit_code in (0, None) or bool(warned)

    def summary(self) -> str:
        """One line: how many checks succeeded, failed and warned."""
        counts = {status: len(self.ids(status)) for status in ("SUCCESS", "FAILURE", "WARNING")}
        return f"{counts['SUCCESS']} passed, {counts['FAILURE']} failed, {counts['WARNING']} warnings"

    def explain(self) -> str:
        """The checks that did not succeed, then the suite's output."""
        bad = [check for check in self.checks if check["status"] in ("FAILURE", "WARNING")]
        lines = [f"{self.scenario}: exit code {self.exit_code}, succeeded: {sorted(self.ids('SUCCESS'))}"]
        for check in bad:
            lines.append(f"  {check['status']} {check['id']}: {check.get('errorMessage') or check.get('details')}")
        return "\n".join([*lines, "--- suite output ---", self.output])


def _prepare(mode: str, args: tuple[str, ...], out: Path) -> list[str]:
    why = missing()
    assert why is None, why
    out.mkdir(parents=True, exist_ok=True)
    return [node() or "node", "--require", str(PRELOAD), str(SUITE), mode, *args, "-o", str(out)]


def _read_checks(out: Path, prefix: str) -> dict[str, list[dict[str, Any]]]:
    """Scenario -> its checks, from ``<out>/<prefix><scenario>-<time>/checks.json``.

    A scenario name may hold a slash (``auth/metadata-default``): its folder is then nested.
    """
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(out.rglob("checks.json")):
        folder = path.parent.relative_to(out).as_posix()
        named = re.fullmatch(rf"{prefix}(.+)-\d{{4}}-\d\d-\d\dT[\d-]+Z", folder)
        assert named, f"unexpected results folder {path.parent}"
        found[named.group(1)] = json.loads(path.read_text(encoding="utf-8"))
    return found


async def run_suite(mode: str, *args: str, out: Path) -> tuple[int, str]:
    """Run ``conformance <mode> <args> -o <out>`` to its end; its exit code and output.

    Raises:
        AssertionError: the suite or Node is not installed.
        TimeoutError: the run took longer than ``SUITE_TIMEOUT``.
    """
    command = _prepare(mode, args, out)
    log = out / "suite-output.txt"
    with log.open("wb") as sink:
        proc = await anyio.open_process(
            command,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=str(ROOT),
            start_new_session=True,
        )
        try:
            with anyio.fail_after(SUITE_TIMEOUT):
                await proc.wait()
        finally:
            with anyio.CancelScope(shield=True):
                with suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
                await proc.aclose()
    code = proc.returncode if proc.returncode is not None else -1
    return code, log.read_bytes().decode("utf-8", errors="replace")


async def run_client_scenario(scenario: str, out: Path) -> Verdict:
    """Client mode: the suite serves ``scenario`` and runs tests/conformance/client.py against it."""
    args = ("--command", client_command(), "--timeout", str(CLIENT_TIMEOUT_MS), "--scenario", scenario)
    code, output = await run_suite("client", *args, out=out)
    checks = _read_checks(out, "")
    assert scenario in checks, f"the suite wrote no checks for {scenario} under {out} (exit code {code}):\n{output}"
    return Verdict(scenario, code, checks[scenario], output)


async def run_server_suite(url: str, out: Path) -> dict[str, Verdict]:
    """Server mode: the suite connects to ``url`` as a client and runs every active server scenario.

    One run for all of them (Node starts once); each verdict is judged by its own checks.
    """
    code, output = await run_suite("server", "--url", url, out=out)
    checks = _read_checks(out, "server-")
    assert checks, f"the suite wrote no checks under {out} (exit code {code}):\n{output}"
    return {scenario: Verdict(scenario, None, found, output) for scenario, found in checks.items()}
