"""The gateway's MCP face: ``McpGateway``, one SDK server per profile, input rounds, upstream
resources and prompts, and serving it."""
