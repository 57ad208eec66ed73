"""Which rows a gateway lists: those no row rule of the policy refuses.

A row rule (``AllowTools``, ``DenyServers``, ``DenyAnnotated``...) decides from the row
alone, so a row it would refuse at call time is not listed either; other hooks decide
per call and leave the listing alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .._entries import Entry
from .._hook_actions import Hook
from .._policy_rules import _RowRule

__all__ = ["allowed_rows"]


def allowed_rows(entries: Iterable[Entry], hooks: Sequence[Hook]) -> list[Entry]:
    """The rows of ``entries`` that no row rule among ``hooks`` refuses, in order."""
    rules = [hook for hook in hooks if isinstance(hook, _RowRule)]
    return [row for row in entries if all(rule.refusal(row) is None for rule in rules)]
