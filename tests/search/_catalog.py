"""A small catalog of realistic tools for the search tests."""

from __future__ import annotations

from typing import Any

from toolmesh import AsyncRanker, DeferPolicy, Ranker, ToolRegistry, tool


@tool
async def get_weather_forecast(city: str, days: int = 1) -> str:
    """Forecast the weather of a city.

    Args:
        city: The city's name.
        days: How many days ahead.
    """
    return f"sunny in {city}"


@tool
async def createPullRequest(repository: str, title: str, head: str) -> str:
    """Open a pull request on GitHub.

    Args:
        repository: owner/name of the repository.
        title: The title.
        head: The branch with the changes.
    """
    return f"opened {title}"


@tool
async def send_email(to: str, subject: str, body: str) -> str:
    """Send an email message to someone."""
    return "sent"


@tool
async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


async def _echo(arguments: dict[str, Any]) -> str:
    return str(arguments.get("text", ""))


def make_registry(
    defer: DeferPolicy | None = None, ranker: Ranker | AsyncRanker | None = None, **deferred: bool
) -> ToolRegistry:
    """The four native tools and a dynamic ``calendar__create_event``; ``deferred`` marks rows by name."""
    registry = ToolRegistry(defer=defer, ranker=ranker)
    for fn in (get_weather_forecast, createPullRequest, send_email, add):
        registry.register(fn, defer_loading=deferred.get(fn.name))
    registry.register_dynamic(
        "calendar__create_event",
        {"type": "object", "properties": {"title": {"type": "string", "description": "What the meeting is about"}}},
        _echo,
        description="Put a new event in the calendar.",
        defer_loading=deferred.get("calendar__create_event"),
    )
    return registry
