"""The ``toolmesh`` command's connect display: one status line per server, then a summary.

On a terminal the lines update in place (connecting, connected with N tools, failed
with why, stopped and why); elsewhere (a pipe, a log) each server's final line is printed once. All of it
goes to stderr, and every text is printed literally (labels and errors are never read
as rich markup).
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from toolmesh.mcp._spec.server import McpServer

__all__ = ["ConnectStatus"]


class _Stopped(str):
    """A server that did not fail but is not connected: why (Ctrl-C, or another server failed)."""


class ConnectStatus:
    """Status lines of the servers being connected; ``with`` it around ``connect_all``."""

    def __init__(self, console: Console, specs: list[McpServer]) -> None:
        self._console = console
        self._specs = specs
        self._state: dict[str, int | Exception | _Stopped | None] = {spec.label: None for spec in specs}
        self._live: Live | None = None

    def __enter__(self) -> ConnectStatus:
        if self._console.is_terminal:
            self._live = Live(self._render(), console=self._console, refresh_per_second=8, transient=True)
            self._live.__enter__()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)
            self._live = None
        self._console.print(self._render(final=True), soft_wrap=True)

    def update(self, spec: McpServer, outcome: int | Exception) -> None:
        """Record a server's outcome: the number of tools it listed, or why it failed."""
        self._state[spec.label] = outcome
        if self._live is not None:
            self._live.update(self._render())

    def settle(self, tools_by_server: dict[str, int], *, interrupted: bool = False) -> None:
        """After ``connect_all``: the servers whose rows were added, with their row counts.

        A server that neither failed nor kept its rows is shown as stopped, with why: the
        interrupt, or the servers whose failure closed it (all-or-nothing connect).
        """
        failed = [label for label, outcome in self._state.items() if isinstance(outcome, Exception)]
        for label, outcome in self._state.items():
            if label in tools_by_server:
                self._state[label] = tools_by_server[label]
            elif isinstance(outcome, Exception):
                continue
            elif interrupted:
                self._state[label] = _Stopped(
                    "stopped: interrupted while connecting"
                    if outcome is None
                    else "connected, then stopped: interrupted"
                )
            elif failed:
                because = f"{', '.join(failed)} failed"
                self._state[label] = _Stopped(
                    f"not started: {because}" if outcome is None else f"connected, then closed because {because}"
                )
            else:
                self._state[label] = _Stopped("not connected")

    @property
    def failed(self) -> int:
        """How many servers failed."""
        return sum(isinstance(outcome, Exception) for outcome in self._state.values())

    def _render(self, *, final: bool = False) -> RenderableType:
        """Live: a grid with spinners. Final: plain lines, printed unwrapped (a pipe keeps whole reasons)."""
        width = max((len(spec.label) for spec in self._specs), default=0)
        lines: list[tuple[Text | Spinner, Text]] = []
        for spec in self._specs:
            outcome = self._state[spec.label]
            icon: Text | Spinner
            if isinstance(outcome, Exception):
                icon, line = Text("✗", style="red"), Text(f"failed: {outcome}")
            elif isinstance(outcome, _Stopped):
                icon, line = Text("-", style="yellow"), Text(str(outcome))
            elif outcome is None:
                where = spec.command if spec.transport == "stdio" else spec.host
                icon = Text("…") if final else Spinner("dots")
                line = Text(f"connecting ({spec.transport}: {where})")
            else:
                icon, line = Text("✓", style="green"), Text(f"connected, {outcome} tool{'s' * (outcome != 1)}")
            lines.append((icon, Text.assemble((spec.label.ljust(width), "bold"), " ", line)))
        if not final:
            grid = Table.grid(padding=(0, 1))
            grid.add_column(no_wrap=True)
            grid.add_column()
            for icon, text in lines:
                grid.add_row(icon, text)
            return grid
        connected = [o for o in self._state.values() if isinstance(o, int)]
        summary = f"{len(connected)} of {len(self._specs)} server{'s' * (len(self._specs) != 1)} connected"
        total = sum(connected)
        summary += f" ({total} tool{'s' * (total != 1)})"
        if self.failed:
            summary += f", {self.failed} failed"
        stopped = sum(isinstance(outcome, _Stopped) for outcome in self._state.values())
        if stopped:
            summary += f", {stopped} stopped"
        texts = [Text.assemble(icon, " ", text) for icon, text in lines if isinstance(icon, Text)]
        return Group(*texts, Text(summary))
