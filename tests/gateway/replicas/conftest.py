"""The replica tests share their replicas per module (starting three `toolmesh serve` processes is the cost)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"
