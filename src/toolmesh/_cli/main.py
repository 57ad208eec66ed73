"""The ``toolmesh`` console script: the app with every command module registered on it."""

from __future__ import annotations

from . import catalog, serve
from .app import app

__all__ = ["app", "main"]

_COMMANDS = (catalog, serve)
"""The modules whose commands register on ``app`` when imported."""


def main() -> None:
    """Entry point of the ``toolmesh`` console script."""
    app()
