"""Connections to MCP servers: sessions, transports, discovery, calls with their input rounds and
tasks, resources, server logs, and the one map from SDK errors to ``ErrorKind``."""
