"""A connection pinned to 2026-07-28 asks the server about itself (``server/discover``).

``mcp.Client(mode="2026-07-28")`` adopts a made-up discover result without asking: no
server info and no capabilities, so no ``subscriptions/listen`` stream for tool-list
changes either. ``discover_pinned`` sends ``server/discover`` once at the pinned version
and adopts the answer, as ``mode="auto"`` does, but without auto's fallback to the
handshake: a server that cannot answer it does not speak 2026-07-28, and the error says
so (``ProtocolNotSpoken``) instead of failing later on an answer of the other era.
"""

from __future__ import annotations

import mcp_types
import pydantic
from mcp import Client
from mcp.shared.exceptions import MCPError

__all__ = ["ProtocolNotSpoken", "discover_pinned"]


class ProtocolNotSpoken(Exception):
    """A server pinned to a protocol version refused ``server/discover`` at that version."""


async def discover_pinned(client: Client, version: str) -> None:
    """Send ``server/discover`` at ``version`` and adopt the answer on ``client``'s session.

    Raises:
        ProtocolNotSpoken: the server answered with an error (or an answer that is no
            discover result, or one without ``version``): it does not speak ``version``.
    """
    session = client.session
    try:
        raw = await session.send_discover(version)
        session.adopt(mcp_types.DiscoverResult.model_validate(raw))
    except MCPError as exc:
        if exc.code == mcp_types.CONNECTION_CLOSED:
            raise  # the server went away: not a version question
        answer = f"it answered server/discover with: {exc.error.message}"
        raise _not_spoken(version, answer) from exc
    except pydantic.ValidationError as exc:
        raise _not_spoken(version, "its answer to server/discover is not a discover result") from exc
    except RuntimeError as exc:  # adopt(): no version in common
        raise _not_spoken(version, str(exc)) from exc


def _not_spoken(version: str, answer: str) -> ProtocolNotSpoken:
    return ProtocolNotSpoken(
        f'the server does not speak MCP {version} ({answer}); set protocol="auto" or "2025-11-25" '
        "on its McpServer (protocolVersion in a config file)"
    )
