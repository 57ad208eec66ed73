"""Hooks: typed decisions about a turn's tool calls, and stacks that chain them.

A hook is a ``Hook`` subclass that overrides any of three event methods, each with
its own action types (so an action that makes no sense for an event is a type
error, and a run-time ``HookError`` naming the hook):

=========================  ==========================================  =====================
event                      actions                                     terminal
=========================  ==========================================  =====================
``on_tool_call``           ``Proceed``, ``RewriteArguments``,          ``SkipWith``,
                           ``SkipWith``, ``Refuse``, ``StopTurn``      ``Refuse``, ``StopTurn``
``on_tool_result``         ``Keep``, ``RewritePresentation``,          ``StopTurn``
                           ``StopTurn``
``on_invalid_tool_call``   ``Defer``, ``Fail``, ``Repair``,            ``Fail``, ``Repair``,
                           ``SkipWith``                                ``SkipWith``
=========================  ==========================================  =====================

Hooks run in order; a rewrite feeds the next hook; the first terminal action ends
the chain. A fourth, optional method, ``around_tool_call``, returns an async context
manager held while the tool runs (``ConcurrencyLimit`` uses it to hold a slot).

Observing calls: a ``CallObserver`` is a hook that turns every finished call (whatever
its disposition, a cancelled one too) into a ``CallRecord``. ``AuditLog`` writes each as
one JSON line to a logger; ``CallMetrics`` records OpenTelemetry metrics of them
(``PrometheusMetrics`` is a meter provider a Prometheus server scrapes). Put observers
first among the hooks.
"""

from __future__ import annotations

from toolmesh._core.errors import HookError
from toolmesh._hooks.actions import (
    Defer,
    Fail,
    Hook,
    InvalidCall,
    InvalidCallKind,
    InvalidToolCallAction,
    Keep,
    Proceed,
    Refuse,
    Repair,
    RewriteArguments,
    RewritePresentation,
    SkipWith,
    StopTurn,
    ToolCallAction,
    ToolResultAction,
)
from toolmesh._hooks.stack import CallDecision, HookStack, InvalidDecision, ResultDecision
from toolmesh._observe.audit import AuditLog, audit_file_handler
from toolmesh._observe.metrics import CallMetrics
from toolmesh._observe.observer import CallObserver
from toolmesh._observe.prometheus import PrometheusMetrics
from toolmesh._observe.record import CallRecord

__all__ = [
    "AuditLog",
    "CallDecision",
    "CallMetrics",
    "CallObserver",
    "CallRecord",
    "Defer",
    "Fail",
    "Hook",
    "HookError",
    "HookStack",
    "InvalidCall",
    "InvalidCallKind",
    "InvalidDecision",
    "InvalidToolCallAction",
    "Keep",
    "PrometheusMetrics",
    "Proceed",
    "Refuse",
    "Repair",
    "ResultDecision",
    "RewriteArguments",
    "RewritePresentation",
    "SkipWith",
    "StopTurn",
    "ToolCallAction",
    "ToolResultAction",
    "audit_file_handler",
]
