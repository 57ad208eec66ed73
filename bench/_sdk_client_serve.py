"""``toolmesh serve`` with the lean client path off: every upstream ``tools/call`` through the SDK's session.

Run as ``toolmesh`` is (``python bench/_sdk_client_serve.py serve --config FILE``). bench/gateway.py's
row "toolmesh serve, SDK client" runs it, so one run compares the gateway with and without the lean
client path (``McpConnection.lean``, docs/architecture.md).
"""

from __future__ import annotations

import sys
from typing import Any

from toolmesh._cli.main import main
from toolmesh.mcp import McpConnection

_made = McpConnection.__init__


def _sdk_only(self: McpConnection, *args: Any, **kwargs: Any) -> None:
    _made(self, *args, **kwargs)
    self.lean = False


McpConnection.__init__ = _sdk_only  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.exit(main())
