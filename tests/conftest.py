"""Test set-up: async tests run under anyio (``anyio_mode = "auto"`` in pyproject), on asyncio.

Every command the suite runs (in process or as a subprocess) keeps its server logs in a
state folder of the session's own, never in the user's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from _audit import Audited, audit_logger

STATE_DIR_ENV = "TOOLMESH_STATE_DIR"
"""Where toolmesh commands keep their server logs (``toolmesh._cli.server_log``)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def audit_lines() -> Iterator[Audited]:
    """A logger of the test's own and the audit lines it wrote (``_audit.audit_logger``)."""
    with audit_logger() as found:
        yield found


@pytest.fixture(scope="session", autouse=True)
def _state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    previous = os.environ.get(STATE_DIR_ENV)
    os.environ[STATE_DIR_ENV] = str(tmp_path_factory.mktemp("toolmesh-state"))
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop(STATE_DIR_ENV, None)
        else:
            os.environ[STATE_DIR_ENV] = previous
