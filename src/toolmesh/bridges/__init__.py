"""Framework bridges: one toolmesh catalog exported into an agent framework's tool shape.

Each module is an optional extra and imports its framework only when imported itself;
importing ``toolmesh`` imports none of them:

- ``toolmesh.bridges.pydantic_ai`` (``pip install '.[pydantic-ai]'``)
- ``toolmesh.bridges.openai_agents`` (``pip install '.[openai-agents]'``)
- ``toolmesh.bridges.langchain`` (``pip install '.[langchain]'``)

Every bridge dispatches through toolmesh's own path, so hooks, policy, limits, tracing
and redaction apply exactly as in ``run_tool_calls``.
"""

__all__: list[str] = []
