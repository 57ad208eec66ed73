"""Approval ids that carry their own proof: an ``mcp_approval_request`` id is an HMAC of its call.

The endpoint keeps no state between requests, so it cannot remember which calls it
asked the client to approve. Instead the id it hands out binds the server label, the
tool and the exact arguments with a key only the gateway knows
(``ResponsesSettings.secret``). When the client sends the request item back with its
``mcp_approval_response``, the gateway recomputes the HMAC: a match means this gateway
asked for exactly that call; any change to the label, the tool or the arguments (or an
invented id) is refused.

An approved id runs its call once. The id carries the second it was made (in its
nonce) and is accepted for ``max_age`` seconds; running it claims it in the state
backend for that long (``claim``: set-if-absent), so a replay of the same approval,
on this gateway or on any replica sharing the backend, is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable

from toolmesh._state.backend import StateBackend
from toolmesh._state.errors import StateUnavailableError
from toolmesh._state.memory import MemoryState

from .request import RequestError

__all__ = ["DEFAULT_MAX_AGE", "Approvals", "use_approved"]

logger = logging.getLogger("toolmesh.gateway")

_PREFIX = "mcpr_"
_NONCE = 12
_STAMP = 4
"""The nonce's first bytes: the second the id was made (big-endian); the rest is random."""
_MAC = 20
DEFAULT_MAX_AGE = 24 * 3600.0
"""Seconds an approval request id stays valid (and its use is remembered)."""


class Approvals:
    """Makes and checks approval request ids with one secret; remembers the ids used in ``state``."""

    def __init__(
        self,
        secret: bytes,
        *,
        state: StateBackend | None = None,
        max_age: float = DEFAULT_MAX_AGE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._secret = secret
        self.state: StateBackend = state if state is not None else MemoryState()
        """Where used ids are remembered (shared across replicas when the backend is)."""
        self.max_age = max_age
        self._clock = clock

    def _mac(self, nonce: bytes, label: str, name: str, arguments: str) -> bytes:
        message = nonce + json.dumps([label, name, arguments], ensure_ascii=False).encode("utf-8")
        return hmac.new(self._secret, message, hashlib.sha256).digest()[:_MAC]

    def request_id(self, label: str, name: str, arguments: str) -> str:
        """A fresh id bound to (label, tool name, arguments text)."""
        stamp = int(self._clock()).to_bytes(_STAMP, "big")
        nonce = stamp + secrets.token_bytes(_NONCE - _STAMP)
        token = base64.urlsafe_b64encode(nonce + self._mac(nonce, label, name, arguments)).decode("ascii")
        return _PREFIX + token.rstrip("=")

    def verify(self, request_id: object, label: object, name: object, arguments: object) -> bool:
        """Whether ``request_id`` was made by this gateway for exactly this call."""
        if not all(isinstance(value, str) for value in (request_id, label, name, arguments)):
            return False
        assert isinstance(request_id, str) and isinstance(label, str)
        assert isinstance(name, str) and isinstance(arguments, str)
        if not request_id.startswith(_PREFIX):
            return False
        token = request_id[len(_PREFIX) :]
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        except ValueError:
            return False
        if len(raw) != _NONCE + _MAC:
            return False
        nonce, mac = raw[:_NONCE], raw[_NONCE:]
        if not hmac.compare_digest(mac, self._mac(nonce, label, name, arguments)):
            return False
        made = int.from_bytes(nonce[:_STAMP], "big")
        return made - 60 <= self._clock() <= made + self.max_age  # a minute of clock skew between replicas

    async def use(self, request_id: str) -> bool:
        """Claim a verified id for its one run: True the first time, on any replica sharing the state.

        Raises:
            StateUnavailableError: when the shared state cannot be reached (the call must not run).
        """
        return await self.state.claim(f"approval:{request_id}", ttl=self.max_age + 120)


async def use_approved(answered: Iterable[tuple[str, bool]], approvals: Approvals) -> None:
    """Claim each approved request id of an input (``(id, approve)`` pairs) for its one run.

    Raises:
        RequestError: 409 for an approval already used (here or on another replica); 503 when
            the shared state cannot be reached, so no approved call runs unchecked.
    """
    for request_id, approve in answered:
        if not approve:
            continue  # a denial runs nothing: sending it again is harmless
        try:
            fresh = await approvals.use(request_id)
        except StateUnavailableError as exc:
            logger.warning("Responses approvals: %s", exc)
            raise RequestError(
                "approvals cannot be checked just now (the gateway's shared state is unavailable); "
                "send the request again in a moment",
                "input",
                status=503,
                code="state_unavailable",
            ) from exc
        if not fresh:
            raise RequestError(
                f"`input`: the approval {request_id!r} was already used to run its call (an approval runs its "
                "call once, on any replica); send back the mcp_call item the gateway returned for it instead",
                "input",
                status=409,
                code="approval_used",
            )
