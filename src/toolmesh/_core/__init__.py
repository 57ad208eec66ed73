"""The core values every other package builds on: calls, definitions, capabilities, output,
results, errors, names, argument checks, problem wording and the safe JSON Schema validator.
Knows no MCP session and no provider."""
