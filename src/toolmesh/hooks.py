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

__all__ = [
    "CallDecision",
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
]
