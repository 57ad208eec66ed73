"""Test set-up: async tests run under anyio (``anyio_mode = "auto"`` in pyproject), on asyncio."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
