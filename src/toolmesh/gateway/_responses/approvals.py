"""Approval ids that carry their own proof: an ``mcp_approval_request`` id is an HMAC of its call.

The endpoint keeps no state between requests, so it cannot remember which calls it
asked the client to approve. Instead the id it hands out binds the server label, the
tool and the exact arguments with a key only the gateway knows
(``ResponsesSettings.secret``). When the client sends the request item back with its
``mcp_approval_response``, the gateway recomputes the HMAC: a match means this gateway
asked for exactly that call; any change to the label, the tool or the arguments (or an
invented id) is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets

__all__ = ["Approvals"]

_PREFIX = "mcpr_"
_NONCE = 12
_MAC = 20


class Approvals:
    """Makes and checks approval request ids with one secret."""

    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def _mac(self, nonce: bytes, label: str, name: str, arguments: str) -> bytes:
        message = nonce + json.dumps([label, name, arguments], ensure_ascii=False).encode("utf-8")
        return hmac.new(self._secret, message, hashlib.sha256).digest()[:_MAC]

    def request_id(self, label: str, name: str, arguments: str) -> str:
        """A fresh id bound to (label, tool name, arguments text)."""
        nonce = secrets.token_bytes(_NONCE)
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
        return hmac.compare_digest(mac, self._mac(nonce, label, name, arguments))
