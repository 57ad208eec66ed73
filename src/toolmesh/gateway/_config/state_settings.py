"""``serve.state``, ``serve.statePrefix`` and ``serve.workers``: where a deployment's shared state lives.

The state is in-process unless a Redis URL is given (``serve.state``, or ``--state`` /
``$TOOLMESH_STATE``, which win over the file). A password never appears in the file:
it goes in ``$TOOLMESH_STATE``. The key prefix defaults to one derived from the config
itself (everything but ``serve``), so replicas serving the same ``toolmesh.json``
share their state and two deployments on one Redis never meet.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import urlsplit

from toolmesh._core.errors import ServerConfigError
from toolmesh._state.errors import StateConfigError, redact_url
from toolmesh._state.opening import MEMORY, check_state_url

__all__ = ["STATE_ENV", "check_state", "default_prefix", "is_shared", "state_problem"]

STATE_ENV = "TOOLMESH_STATE"
"""The environment variable ``toolmesh serve`` and ``check`` read the state URL from (before the file's)."""
_PREFIX = re.compile(r"[A-Za-z0-9_.:\-{}/]{1,100}")


def default_prefix(document: dict[str, Any]) -> str:
    """``toolmesh:<12 hex>:``, the digest of the config without its ``serve`` section (per-machine settings)."""
    served = {key: value for key, value in document.items() if key != "serve"}
    canonical = json.dumps(served, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"toolmesh:{hashlib.sha256(canonical.encode()).hexdigest()[:12]}:"


def is_shared(url: str | None) -> bool:
    """Whether ``url`` names state other processes can see (not in-process)."""
    return url is not None and url != MEMORY


def state_problem(url: str | None, workers: int, transport: str, *, complete: bool = True) -> str | None:
    """What is wrong with this state and worker count together, in words that say the fix (None: nothing).

    ``complete=False`` for settings the command line or the environment may still complete
    (a file's): several workers without a shared state are then not (yet) a problem.
    """
    try:
        check_state_url(url)
    except StateConfigError as exc:
        return str(exc)
    if workers > 1 and not is_shared(url) and complete:
        return (
            f"{workers} workers need a shared state backend: each worker is its own process, and limits, "
            "approvals and sessions must hold across them; give --state redis://host:port/db "
            f"(or ${STATE_ENV}, or serve.state), or serve with one worker"
        )
    if workers > 1 and transport == "stdio":
        return "stdio serves one client on one process: workers apply to HTTP only"
    return None


def check_state(
    document: dict[str, Any], state: str | None, prefix: str | None, workers: int, transport: str, origin: str
) -> str:
    """Check the file's state settings; the key prefix to use.

    Raises:
        ServerConfigError: naming the key and the fix.
    """
    if state is not None and urlsplit(state).password:
        raise ServerConfigError(
            f"the URL {redact_url(state)!r} holds a password, which would sit in the file",
            key="serve.state",
            fix=f"Put the whole URL in the environment variable {STATE_ENV} (or --state) and remove the key",
            origin=origin,
        )
    problem = state_problem(state, workers, transport, complete=False)
    if problem is not None:
        key = "serve.state" if state is not None and "neither" in problem else "serve.workers"
        raise ServerConfigError(problem, key=key, origin=origin)
    if prefix is not None and not _PREFIX.fullmatch(prefix):
        raise ServerConfigError(
            "is not a key prefix",
            key="serve.statePrefix",
            fix="Use 1-100 letters, digits and '_.:-{}/', e.g. \"toolmesh:prod:\"",
            origin=origin,
        )
    return prefix if prefix is not None else default_prefix(document)
