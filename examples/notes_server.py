"""An example MCP server (official SDK) that `make demo` connects over stdio: a tiny notebook.

Run by hand: ``.venv/bin/python examples/notes_server.py``.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("notes", instructions="A small notebook: list, read and search notes.", log_level="ERROR")

NOTES = {
    "groceries": "eggs, flour, basil",
    "ideas": "a registry where every tool is a typed row",
    "travel": "Rome in April; Oslo in June",
}


class Match(BaseModel):
    title: str
    line: str


class SearchResult(BaseModel):
    matches: list[Match]


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def list_notes() -> str:
    """The titles of all notes, one per line."""
    return "\n".join(sorted(NOTES))


@server.tool(annotations=ToolAnnotations(readOnlyHint=True), structured_output=False)
def read(title: str) -> str:
    """The text of one note."""
    if title not in NOTES:
        raise ToolError(f"No note titled {title!r}; list_notes gives the titles.")
    return NOTES[title]


@server.tool(title="Search notes", annotations=ToolAnnotations(readOnlyHint=True))
def search(query: str) -> SearchResult:
    """Notes whose text contains the query (case-insensitive)."""
    found = [Match(title=t, line=text) for t, text in sorted(NOTES.items()) if query.lower() in text.lower()]
    return SearchResult(matches=found)


@server.tool(annotations=ToolAnnotations(destructiveHint=True, readOnlyHint=False), structured_output=False)
def forget(title: str) -> str:
    """Delete a note."""
    NOTES.pop(title, None)
    return f"forgot {title}"


if __name__ == "__main__":
    server.run("stdio")
