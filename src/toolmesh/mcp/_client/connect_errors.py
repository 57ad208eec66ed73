"""Why a server could not be connected or listed, with a hint for the fix that follows what failed.

Credentials refused, a proxy that wants its own, a host name the server refuses, a wrong
path, a server not speaking the protocol, a TLS certificate not trusted or issued for
another name, a command that does not start: each gets the fix a user can make. The
failure itself is classified by ``_errors.classify``.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING

import mcp_types
from mcp.shared.exceptions import MCPError

from toolmesh._core.errors import ServerConnectionError

from .errors import classify
from .server_discover import ProtocolNotSpoken

if TYPE_CHECKING:
    from toolmesh.mcp._spec.server import McpServer

__all__ = ["connect_error"]


def _untrusted_certificate(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is a failed verification of the server's TLS certificate."""
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def connect_error(
    spec: McpServer,
    exc: BaseException | None,
    stage: str = "connecting",
    http_status: int | None = None,
    fault: str | None = None,
) -> ServerConnectionError:
    """The error for a server that could not be connected or listed, with a hint for the fix.

    The hint follows what failed: credentials refused, a wrong path, a server not
    speaking the protocol, a command that does not start. The caller redacts secrets.
    """
    if fault is not None:  # the server wrote something unreadable: that is the reason, not the closed stream
        error = ServerConnectionError(spec.label, f"{fault} (while {stage}); fix the server's output")
        error.__cause__ = exc
        return error
    if exc is None:
        return ServerConnectionError(spec.label, f"the session ended while {stage}")
    leaf = exc
    while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
        leaf = leaf.exceptions[0]
    if isinstance(leaf, ServerConnectionError) and leaf.server == spec.label:
        return leaf  # already says what failed and what to do
    mapped = classify(leaf, http_status)
    detail = mapped.detail
    if isinstance(leaf, ProtocolNotSpoken):
        hint = str(leaf)
    elif mapped.http_status in (401, 403):
        hint = (
            f"{detail} while {stage}: it refused the credentials; check the Authorization header "
            "(headers=) or auth= on the server spec"
        )
    elif mapped.http_status == 407:
        hint = (
            f"{detail} while {stage}: the proxy asks for credentials; put them in the proxy URL "
            "(HTTPS_PROXY=http://user:password@proxy:port), or set NO_PROXY for this host"
        )
    elif mapped.http_status == 421:
        hint = (
            f"{detail} while {stage}: the server refused the host name in the URL (its DNS-rebinding "
            "protection); use a host name the server allows, or allow this one on the server"
        )
    elif mapped.http_status == 404:
        hint = f"{detail} while {stage}; check the URL's path (MCP endpoints usually end in /mcp)"
    elif mapped.http_status is not None:
        hint = f"{detail} while {stage}; check that the server is running and healthy"
    elif mapped.redirect:
        hint = (
            f"{detail} while {stage}: toolmesh follows no redirect to another address; if the server "
            "moved, give its new URL"
        )
    elif mapped.invalid_answer:
        hint = f"{detail} while {stage}; the server does not speak the protocol correctly"
    elif isinstance(leaf, MCPError) and leaf.code not in (mcp_types.CONNECTION_CLOSED, mcp_types.REQUEST_TIMEOUT):
        hint = f"{detail} while {stage}; the server itself reported this error"
    elif isinstance(leaf, OSError) and spec.transport == "stdio":
        hint = f"could not start {spec.command!r} ({type(leaf).__name__}: {leaf}); check the command and its args"
    elif spec.transport == "http" and _untrusted_certificate(leaf):
        if "mismatch" in str(leaf):  # OpenSSL's "Hostname mismatch" / "IP address mismatch"
            hint = (
                f"{detail} while {stage}: the server's TLS certificate is for another name; connect with a name "
                "the certificate was issued for"
            )
        else:
            hint = (
                f"{detail} while {stage}: the server's TLS certificate is not trusted; if it comes from a private "
                "CA, set SSL_CERT_FILE to a bundle that holds that CA (and the public ones: it replaces the "
                "system's), then connect again"
            )
    elif spec.transport == "http":
        hint = f"{detail} while {stage}; check that the URL is right and the server is running"
    elif spec.transport == "stdio":
        hint = f"{detail} while {stage}; run the command by hand to see why it fails"
    else:
        hint = f"{detail} while {stage}"
    error = ServerConnectionError(spec.label, hint)
    error.__cause__ = leaf
    return error
