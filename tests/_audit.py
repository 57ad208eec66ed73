"""A logger of the test's own for audit lines: fresh (no propagation), and the lines it wrote.

with audit_logger() as (logger, lines):     # or the `audit_lines` fixture (tests/conftest.py)
    AuditLog(logger) ...
    lines.records()                          # the JSON lines, parsed
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["AuditLines", "Audited", "audit_logger"]


class AuditLines(logging.Handler):
    """Keeps every formatted line a logger emits."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    def records(self) -> list[dict[str, object]]:
        return [json.loads(line) for line in self.lines]


Audited = tuple[logging.Logger, AuditLines]
"""A logger and the lines it wrote."""


@contextmanager
def audit_logger(level: int = logging.INFO) -> Iterator[Audited]:
    """A new logger at ``level`` whose lines are kept, for the block."""
    logger = logging.getLogger(f"test.audit.{uuid.uuid4().hex}")
    logger.setLevel(level)
    logger.propagate = False
    lines = AuditLines()
    logger.addHandler(lines)
    try:
        yield logger, lines
    finally:
        logger.removeHandler(lines)
