"""The ``mcpServers`` JSON files MCP hosts write, read into ``McpServer`` specs.

The accepted keys and their validation live in ``_config_keys``; an error names the
file, the server, the key and the fix.
Keys that only matter to another host (Cline's ``transportType``, VS Code's ``dev``, an
approval list, a ``description``) are ignored with a debug log; any other unknown key is
an error, so a typo never passes silently.

Limits: a file larger than ``max_bytes`` (1 MiB by default) is refused before it is
read whole, and one nested more than ``DEFAULT_MAX_DEPTH`` (128) levels before it is
parsed; integers too long to convert, and NUL characters in a command, its arguments or
its environment are errors at load.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from toolmesh._core.errors import ServerConfigError
from toolmesh._core.json_limits import DEFAULT_MAX_DEPTH, JsonTooDeep, parse_json
from toolmesh._core.names import PROVIDER_RULES
from toolmesh._core.problems import json_type

from .defaults import DEFAULT_MAX_CONFIG_BYTES, Transport
from .hosts import Labelled, check_allowed_hosts
from .keys import IGNORED, OPTIONS, TYPES, Document, ServerEntry, Switch, spellings, validate

__all__ = ["DEFAULT_MAX_CONFIG_BYTES", "label_for", "load_config", "read_json", "servers_of"]

logger = logging.getLogger("toolmesh.mcp")

_LABEL_RULE = PROVIDER_RULES["openai"]
"""A label is what the OpenAI rule accepts (1-64 of ``A-Za-z0-9_-``), so its sanitizer applies."""


_Spec = TypeVar("_Spec", bound=Labelled)

_ENV_REF = re.compile(r"\$\{(env|input):([^}]*)\}")
_ENV_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)")


SpecMaker = Callable[..., _Spec]
"""Makes one server spec from a config entry's checked keys, given as keywords (``McpServer`` itself is one)."""


def load_config(
    source: str | os.PathLike[str] | Mapping[str, Any],
    make: SpecMaker[_Spec],
    *,
    allowed_hosts: Iterable[str] | None = None,
    max_bytes: int = DEFAULT_MAX_CONFIG_BYTES,
) -> list[_Spec]:
    """The servers of an ``mcpServers`` file (or its parsed content), in file order, each made by ``make``.

    See ``McpServer.from_config``, which is the public entry point.
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise ServerConfigError(f"max_bytes must be a whole number of at least 1, not {max_bytes!r}")
    origin: str | None = None
    folder = Path.cwd()
    if isinstance(source, Mapping):
        document: Any = source
    elif isinstance(source, (str, os.PathLike)):
        origin = os.fspath(source)
        folder = Path(origin).resolve().parent
        document = read_json(origin, max_bytes)
    else:
        raise ServerConfigError(
            f"source must be a path or a mapping, not {type(source).__name__}",
            fix="Pass the path of an mcpServers JSON file, or the dict parsed from it",
        )
    try:
        servers = servers_of(document, folder, max_bytes, make)
        if allowed_hosts is not None:
            check_allowed_hosts(servers, allowed_hosts)
    except ServerConfigError as exc:
        if origin is None:
            raise
        raise exc.with_origin(origin) from None
    return servers


def label_for(label: str) -> str:
    """The label a config-file server gets: ``label`` itself when it is valid in tool names.

    Otherwise every character outside ``A-Za-z0-9_-`` becomes ``_``, and a label longer
    than 64 characters keeps its first 55 followed by ``_`` and 8 hex digits of its
    sha256 (so ``github.com/org/repo`` becomes ``github_com_org_repo``).
    """
    return _LABEL_RULE.sanitize(label)


# -- reading the file ---------------------------------------------------------------------


def _read_text(path: str, max_bytes: int, what: str) -> str:
    try:
        with open(path, "rb") as file:
            data = file.read(max_bytes + 1)
    except OSError as exc:
        raise ServerConfigError(f"cannot read the {what} ({exc.strerror or type(exc).__name__})", origin=path) from None
    if len(data) > max_bytes:
        raise ServerConfigError(
            f"the {what} is larger than {max_bytes:,} bytes",
            fix="Pass max_bytes= to McpServer.from_config (--max-config-bytes on the command line) "
            "to read a larger file",
            origin=path,
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ServerConfigError(f"the {what} is not UTF-8 text", origin=path) from None


def read_json(path: str, max_bytes: int, what: str = "MCP config file") -> Any:
    """The parsed JSON (comments and trailing commas allowed) of the file at ``path``.

    Raises:
        ServerConfigError: naming the file, and the line and column of a syntax error.
    """
    text = _read_text(path, max_bytes, what)
    try:
        try:
            return parse_json(text)
        except (json.JSONDecodeError, JsonTooDeep):
            # VS Code's mcp.json is JSON with comments and trailing commas (and a comment may hold brackets).
            return parse_json(_strip_jsonc(text))
    except json.JSONDecodeError as exc:
        raise ServerConfigError(
            f"line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg})",
            fix="Fix the JSON syntax at that position",
            origin=path,
        ) from None
    except JsonTooDeep:
        raise ServerConfigError(
            f"the JSON is nested too deeply to read (more than {DEFAULT_MAX_DEPTH} levels of arrays and objects)",
            fix="A config file needs only a few levels",
            origin=path,
        ) from None
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise ServerConfigError(
            "a number in the JSON has too many digits to read", fix="Use a shorter number", origin=path
        ) from None


def _strip_jsonc(text: str) -> str:
    """Blank out comments and trailing commas, keeping every line and column in place."""
    out = list(text)
    i, n = 0, len(text)
    in_string = False
    last_comma: int | None = None
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 2
                continue
            if c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            last_comma = None
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        elif c == ",":
            last_comma = i
        elif c in "}]":
            if last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif not c.isspace():
            last_comma = None
        i += 1
    return "".join(out)


# -- from the document to specs -----------------------------------------------------------


def servers_of(document: Any, folder: Path, max_bytes: int, make: SpecMaker[_Spec]) -> list[_Spec]:
    """The servers of a parsed ``mcpServers`` document; ``folder`` anchors relative ``envFile`` paths."""
    if not isinstance(document, Mapping):
        raise ServerConfigError(
            f"the config must be a JSON object, not {json_type(document)}",
            fix='Use {"mcpServers": {"<label>": {...}}}',
        )
    present = [key for key in ("mcpServers", "servers") if key in document]
    if not present:
        raise ServerConfigError(
            "found neither 'mcpServers' (Claude Desktop, Cursor) nor 'servers' (VS Code)",
            fix='Use {"mcpServers": {"<label>": {"command": ...} or {"url": ...}}}',
        )
    if len(present) == 2:
        raise ServerConfigError(
            "has both 'mcpServers' and 'servers'", key="servers", fix="Keep one of them, with every server in it"
        )
    key = present[0]
    parsed = validate(Document, {key: document[key]}, None, fix='Use {"<label>": {"command": ...}}')
    entries = parsed.mcpServers if key == "mcpServers" else parsed.servers
    servers: list[_Spec] = []
    owners: dict[str, str] = {}
    for label, entry in (entries or {}).items():
        spec = _server(label, entry, folder, max_bytes, make)
        if spec is None:
            continue
        if spec.label in owners:
            raise ServerConfigError(
                f"the labels {owners[spec.label]!r} and {label!r} both become {spec.label!r} in tool names",
                server=label,
                fix="Rename one of them; a label keeps only letters, digits, '_' and '-' (others become '_')",
            )
        owners[spec.label] = label
        servers.append(spec)
    return servers


def _server(label: str, entry: Any, folder: Path, max_bytes: int, make: SpecMaker[_Spec]) -> _Spec | None:
    if not isinstance(entry, Mapping):
        raise ServerConfigError(
            f"must be an object, not {json_type(entry)}",
            server=label,
            fix='Use {"command": ..., "args": [...]} or {"url": ...}',
        )
    if validate(Switch, entry, label).disabled:
        return None
    for name in ServerEntry.model_fields:
        given = [key for key in spellings(name) if key in entry]
        if len(given) > 1:
            raise ServerConfigError(
                f"is given twice (as {given[0]!r} and {given[1]!r})", server=label, key=given[1], fix="Keep one of them"
            )
    model = validate(ServerEntry, entry, label)
    ignored = [key for key in IGNORED if key in entry]
    if ignored:
        logger.debug("MCP server %r: ignoring %s (used by other MCP hosts only)", label, ", ".join(ignored))
    transport = _transport(label, model)
    options: dict[str, Any] = {name: getattr(model, name) for name in OPTIONS if name in model.model_fields_set}
    if model.serverUrl is not None:
        options["url"] = model.serverUrl  # Windsurf's spelling
    kwargs = {name: _expand(label, spellings(name)[0], value) for name, value in options.items()}
    if model.env is not None:
        kwargs["env"] = {name: _env_text(value) for name, value in kwargs["env"].items()}
    if model.stderr is not None:
        kwargs["stderr"] = os.fspath(folder / kwargs["stderr"])
    if model.envFile is not None:
        if transport != "stdio":
            raise ServerConfigError(
                "an HTTP server has no environment", server=label, key="envFile", fix="Remove it, or use a command"
            )
        path = folder / _expand(label, "envFile", model.envFile)
        kwargs["env"] = {**_read_env_file(label, path, max_bytes), **kwargs.get("env", {})}
    name = label_for(label)
    if name != label:
        logger.debug("MCP server %r: named %r in tool names", label, name)
    try:
        return make(label=name, transport=transport, **kwargs)
    except ServerConfigError as exc:
        if name == label:
            raise
        raise ServerConfigError(exc.problem, server=label, key=exc.key, fix=exc.fix) from None


def _transport(label: str, model: ServerEntry) -> Transport:
    has_command = model.command is not None
    if model.url is not None and model.serverUrl is not None:
        raise ServerConfigError(
            "has both 'url' and 'serverUrl'", server=label, key="serverUrl", fix="Keep one of them (the same thing)"
        )
    url_key = "url" if model.url is not None else "serverUrl" if model.serverUrl is not None else None
    kind = model.type
    if kind is not None:
        if kind == "sse":
            raise ServerConfigError(
                "the legacy SSE transport is not supported",
                server=label,
                key="type",
                fix='Use the server\'s Streamable HTTP endpoint with "type": "http" (often the same URL '
                "ending in /mcp instead of /sse)",
            )
        if kind not in TYPES:
            raise ServerConfigError(f"unknown type {kind!r}", server=label, key="type", fix='Use "stdio" or "http"')
        transport = TYPES[kind]
        if transport == "stdio" and url_key is not None:
            raise ServerConfigError(
                f'a "stdio" server has no {url_key}', server=label, key=url_key, fix='Remove it, or use "type": "http"'
            )
        if transport == "http" and has_command:
            raise ServerConfigError(
                'an "http" server has no command', server=label, key="command", fix='Remove it, or use "type": "stdio"'
            )
        return transport
    if has_command and url_key is not None:
        raise ServerConfigError(
            f"has both 'command' and {url_key!r}",
            server=label,
            key=url_key,
            fix=f"Keep 'command' for a local (stdio) server or {url_key!r} for an HTTP server, not both",
        )
    if not has_command and url_key is None:
        raise ServerConfigError(
            "has neither 'command' nor 'url'",
            server=label,
            fix='Add "command" (and "args") for a local server, or "url" for an HTTP server',
        )
    return "stdio" if has_command else "http"


def _env_text(value: str | int | float) -> str:
    """Environment values are text; a number is written as JSON writes it (``8080``, ``0.5``)."""
    return value if isinstance(value, str) else json.dumps(value)


def _read_env_file(label: str, path: Path, max_bytes: int) -> dict[str, str]:
    """``KEY=VALUE`` lines (``#`` comments, blank lines, ``export``, quoted values) of an env file."""
    try:
        text = _read_text(str(path), max_bytes, "env file")
    except ServerConfigError as exc:
        raise ServerConfigError(f"{path}: {exc.problem}", server=label, key="envFile", fix=exc.fix) from None
    env: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _ENV_LINE.fullmatch(line)
        if match is None:
            raise ServerConfigError(
                f"{path}: line {number} is not KEY=VALUE", server=label, key="envFile", fix="Fix or remove that line"
            )
        key, value = match.group(1), match.group(2).strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        else:
            value = value.split(" #", 1)[0].rstrip()
        env[key] = value
    return env


def _expand(label: str, key: str, value: Any, where: str | None = None) -> Any:
    """Replace ``${env:NAME}`` in string values (as VS Code and Cursor do)."""
    where = where or key
    if isinstance(value, str):
        return _ENV_REF.sub(lambda m: _lookup(label, where, m), value) if "${" in value else value
    if isinstance(value, list):
        return [_expand(label, key, v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {k: _expand(label, key, v, f"{where}.{k}") for k, v in value.items()}
    return value


def _lookup(label: str, where: str, match: re.Match[str]) -> str:
    kind, name = match.group(1), match.group(2)
    if kind == "input":
        raise ServerConfigError(
            f"${{input:{name}}} needs an interactive prompt, which toolmesh does not have",
            server=label,
            key=where,
            fix=f"Use ${{env:NAME}} and set the environment variable instead of input {name!r}",
        )
    value = os.environ.get(name)
    if value is None:
        raise ServerConfigError(
            f"refers to the environment variable {name!r}, which is not set",
            server=label,
            key=where,
            fix=f"Set {name} in the environment",
        )
    return value
