"""A failed request's model text names what failed: a tool, a resource, a prompt or a server."""

from __future__ import annotations

import pytest

from toolmesh.mcp._client.errors import map_error


@pytest.mark.parametrize(
    ("operation", "subject", "said"),
    [
        ("tools/call", "add", "The tool 'add'"),
        ("resources/read", "demo://readme", "The resource 'demo://readme'"),
        ("resources/subscribe", "demo://readme", "The resource 'demo://readme'"),
        ("prompts/get", "greet", "The prompt 'greet'"),
        ("resources/list", "demo", "The server 'demo'"),
        ("completion/complete", "greet", "The prompt or resource template 'greet'"),
    ],
)
def test_a_timeout_names_what_did_not_answer(operation: str, subject: str, said: str) -> None:
    error = map_error(TimeoutError(), server="demo", tool=subject, operation=operation)
    assert error.model_feedback == f"{said} did not answer in time. You may try again."
