"""Bearer tokens of ``toolmesh.json``: read from an environment variable or a file, never from the file itself.

A token is read once, when the config is loaded. It never appears in ``repr()``, an
error message or a log line; only where it came from does (``env TOOLMESH_TOKEN``,
``file secrets/token``). A token shorter than ``MIN_TOKEN_CHARS`` is refused: it
could be guessed.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolmesh._core.errors import ServerConfigError

from .keys import TokenKeys

__all__ = ["MIN_TOKEN_CHARS", "TokenSource", "read_tokens", "refuse_literal_tokens"]

logger = logging.getLogger("toolmesh.gateway")

MIN_TOKEN_CHARS = 16
"""The shortest token accepted (``secrets.token_urlsafe(32)`` makes 43 characters)."""
_MAX_TOKEN_FILE_BYTES = 4096
_HOW = "Make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"


@dataclass(frozen=True, slots=True)
class TokenSource:
    """One bearer token and where it came from; the token is secret."""

    token: str = field(repr=False)
    """The secret: never shown."""
    source: str
    """Where it was read: ``env NAME`` or ``file PATH``."""
    profiles: frozenset[str] | None = None
    """The profiles it opens (None: every profile)."""
    name: str | None = None
    """Who holds it (``name`` in the file): its caller's ``Identity.subject``; None: where it came from."""

    @property
    def subject(self) -> str:
        """The subject of its caller's identity: its name, else where it was read (``env TOOLMESH_TOKEN``)."""
        return self.name or self.source


def read_tokens(keys: Sequence[TokenKeys], folder: Path, origin: str) -> list[TokenSource]:
    """The tokens ``serve.auth.tokens`` points at.

    Raises:
        ServerConfigError: naming the key, for an unset variable, an unreadable or
            empty file, a short token, or an entry with neither or both sources.
    """
    tokens = []
    for index, entry in enumerate(keys):
        key = f"serve.auth.tokens[{index}]"
        if (entry.env is None) == (entry.file is None):
            raise ServerConfigError(
                "needs exactly one of 'env' and 'file'",
                key=key,
                fix='Write {"env": "TOOLMESH_TOKEN"} or {"file": "path/to/token"}',
                origin=origin,
            )
        if entry.env is not None:
            token, source = _from_env(entry.env, f"{key}.env", origin), f"env {entry.env}"
        else:
            assert entry.file is not None
            path = folder / os.path.expanduser(entry.file)
            token, source = _from_file(path, f"{key}.file", origin), f"file {entry.file}"
        if len(token) < MIN_TOKEN_CHARS:
            raise ServerConfigError(
                f"the token ({source}) is shorter than {MIN_TOKEN_CHARS} characters, easy to guess",
                key=key,
                fix=_HOW,
                origin=origin,
            )
        profiles = frozenset(entry.profiles) if entry.profiles is not None else None
        tokens.append(TokenSource(token, source, profiles, entry.name))
    return tokens


def _from_env(name: str, key: str, origin: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ServerConfigError(
            f"the environment variable {name!r} is not set (or is empty)",
            key=key,
            fix=f"Set {name} to the token before starting the gateway. {_HOW}",
            origin=origin,
        )
    return value


def _from_file(path: Path, key: str, origin: str) -> str:
    try:
        with open(path, "rb") as file:
            data = file.read(_MAX_TOKEN_FILE_BYTES + 1)
            mode = os.fstat(file.fileno()).st_mode
    except OSError as exc:
        raise ServerConfigError(
            f"cannot read the token file {str(path)!r} ({exc.strerror or type(exc).__name__})",
            key=key,
            fix="Give the path of a file holding the token, relative to this config file",
            origin=origin,
        ) from None
    lines = data.decode("utf-8", "replace").strip().splitlines()
    if len(data) > _MAX_TOKEN_FILE_BYTES or len(lines) != 1:
        raise ServerConfigError(
            f"the token file {str(path)!r} must hold one token on one line",
            key=key,
            fix=_HOW,
            origin=origin,
        )
    if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
        logger.warning("the token file %s can be read by other users; chmod 600 it", path)
    return lines[0].strip()


def refuse_literal_tokens(document: dict[str, Any], origin: str) -> None:
    """Refuse a token written in the file itself (``serve.auth.token``, ``tokens[i].token`` or a bare string)."""
    serve = document.get("serve")
    auth = serve.get("auth") if isinstance(serve, dict) else None
    if isinstance(auth, dict) and "token" in auth:
        key = "serve.auth.token"
    elif isinstance(auth, dict) and isinstance(auth.get("tokens"), list):
        found = [
            i for i, t in enumerate(auth["tokens"]) if isinstance(t, str) or (isinstance(t, dict) and "token" in t)
        ]
        if not found:
            return
        item = auth["tokens"][found[0]]
        key = f"serve.auth.tokens[{found[0]}]" + (".token" if isinstance(item, dict) else "")
    else:
        return
    raise ServerConfigError(
        "a token is never written in the config file (files get shared, committed and logged)",
        key=key,
        fix='Put it in an environment variable and write {"env": "TOOLMESH_TOKEN"}, '
        'or in a file only you can read and write {"file": "path/to/token"}',
        origin=origin,
    )
