"""Ready-made hooks: allow/deny rules, approval, concurrency and rate limits, sizes, pinning.

Every refusal has disposition ``refused`` and a reason the model is shown (error
kind ``refused``; ``rate_limited`` for ``RateLimit``, which is retryable). Name and
server patterns are ``fnmatch`` patterns, matched case-sensitively (``"fs__*"``).

One policy object may serve many turns at once: limits and pins are shared by
every turn the object is passed to.
"""

from __future__ import annotations

from toolmesh._policy.approval import ApprovalCallback, RequireApproval
from toolmesh._policy.callers import ForCallers
from toolmesh._policy.limits import ArgumentSizeLimit, ConcurrencyLimit, RateLimit
from toolmesh._policy.pinning import DefinitionPinning, definition_digest
from toolmesh._policy.rules import AllowServers, AllowTools, DenyAnnotated, DenyServers, DenyTools, DenyWhere

__all__ = [
    "AllowServers",
    "AllowTools",
    "ApprovalCallback",
    "ArgumentSizeLimit",
    "ConcurrencyLimit",
    "DefinitionPinning",
    "DenyAnnotated",
    "DenyServers",
    "DenyTools",
    "DenyWhere",
    "ForCallers",
    "RateLimit",
    "RequireApproval",
    "definition_digest",
]
