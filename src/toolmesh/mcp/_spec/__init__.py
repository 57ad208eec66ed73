"""MCP server specs: ``McpServer``, the ``mcpServers`` files and their keys, host rules and
configured secrets. Nothing here opens a connection."""
