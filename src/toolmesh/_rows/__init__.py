"""The typed rows of a catalog (``NativeEntry``, ``McpEntry``, ``DynamicEntry``, ``HostedEntry``)
and how each is made: a Python function's schema, an MCP tool's conversion."""
