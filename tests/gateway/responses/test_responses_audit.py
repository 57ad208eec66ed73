"""The Responses endpoint's gateway-owned calls are observed as the MCP face's are: audited with profile and caller."""

from __future__ import annotations

from openai import AsyncOpenAI

from _audit import Audited
from _responses import Reply, ScriptedUpstream, serve_asgi
from toolmesh import ToolRegistry, tool
from toolmesh.gateway import BearerToken, HttpSettings, McpGateway, ResponsesEndpoint, ResponsesSettings
from toolmesh.hooks import AuditLog

TOKEN = "responses-audit-token-0123456789"


@tool
def ping(word: str) -> str:
    """Answer pong."""
    return f"pong {word}"


async def test_a_catalog_call_of_the_responses_endpoint_is_audited(
    audit_lines: Audited,
) -> None:
    logger, lines = audit_lines
    upstream = ScriptedUpstream([Reply(tool_calls=[("ping", '{"word": "hi"}')]), Reply(text="done")])
    async with serve_asgi(upstream.app) as model, ToolRegistry() as registry:
        registry.register(ping)
        gateway = McpGateway(registry, observers=[AuditLog(logger, include_arguments=True, secrets=[TOKEN])])
        endpoint = ResponsesEndpoint.for_gateway(gateway, ResponsesSettings(upstream=model + "/v1", offer_catalog=True))
        settings = HttpSettings(port=0, tokens=(BearerToken(TOKEN, name="svc"),))
        app = gateway.http_app(settings, responses=endpoint)
        async with serve_asgi(app) as base, AsyncOpenAI(base_url=base + "/v1", api_key=TOKEN, max_retries=0) as client:
            response = await client.responses.create(model="m", input="hi")
    assert response.output_text == "done"
    (record,) = lines.records()
    assert (record["tool"], record["disposition"], record["kind"]) == ("ping", "succeeded", "native")
    assert (record["profile"], record["subject"], record["arguments"]) == ("default", "svc", '{"word":"hi"}')
    assert TOKEN not in lines.lines[0]
