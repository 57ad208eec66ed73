"""The one error of the state backends, and how a backend's URL is shown without its password."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from toolmesh._core.errors import ConfigurationError, ErrorKind, ToolExecutionError, ToolmeshError

__all__ = ["StateConfigError", "StateUnavailableError", "redact_url"]


class StateUnavailableError(ToolmeshError):
    """The shared state backend cannot be reached (or did not answer in time).

    Raised by every operation of a backend that talks to a server; what needs the
    shared state fails closed with it (a limit is never skipped), and the next
    operation tries the server again.
    """

    def __init__(self, url: str, detail: str) -> None:
        self.url = url
        """The backend's URL, password redacted."""
        self.detail = detail
        super().__init__(f"the shared state at {url} is unavailable ({detail})")

    def as_tool_error(self, what: str) -> ToolExecutionError:
        """A retryable ``unavailable`` call error: ``what`` could not be checked against the shared state."""
        return ToolExecutionError(
            f"{what}: {self}",
            kind=ErrorKind.UNAVAILABLE,
            model_feedback=f"{what} could not be checked just now; try the call again in a moment.",
            cause=self,
        )


class StateConfigError(ConfigurationError):
    """A state setting that cannot work: an unknown URL scheme, or several workers without a shared backend."""


def redact_url(url: str) -> str:
    """``url`` with its password (and a lone user name, which some servers take as the password) starred out."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:
        return "<unparsable URL>"
    if "@" not in netloc:
        return url
    credentials, _, host = netloc.rpartition("@")
    user, colon, _ = credentials.partition(":")
    shown = f"{user}:***" if colon and user else "***"
    return urlunsplit(parts._replace(netloc=f"{shown}@{host}"))
