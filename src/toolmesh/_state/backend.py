"""``StateBackend``: the operations a gateway's shared state offers, whatever holds it.

Every key lives under the backend's ``prefix`` (one per deployment) and has a TTL, so
nothing grows without bound. Every operation is atomic where it says so: a token
taken, a slot held, a claim made or a counter bumped by one process is seen by all of
them at once. A backend that talks to a server raises ``StateUnavailableError`` when
it cannot (bounded by its own timeouts), and tries again on the next operation.

Messages published on a channel reach every subscriber of every process at most
once; a subscriber that may have missed some (the server was lost and is back) is
handed ``RESYNC`` in their place, meaning "read what you care about again".
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Final, Protocol, Self, runtime_checkable

__all__ = ["RESYNC", "Resync", "StateBackend", "UsesState", "share_state"]


class Resync:
    """The type of ``RESYNC``: messages on a channel may have been lost."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "RESYNC"


RESYNC: Final = Resync()
"""Handed to a subscriber instead of the messages lost while the backend was unreachable."""


class StateBackend(ABC):
    """Counters, token buckets, slots, single-use claims, values (set, swapped) and pub/sub, each key with a TTL.

    Use it as an async context manager (or call ``aclose``); an open backend is shared
    by every hook and endpoint of one process.
    """

    prefix: str
    """What every key and channel of this deployment starts with (e.g. ``"toolmesh:3f2a…:"``)."""

    @property
    @abstractmethod
    def shared(self) -> bool:
        """Whether other processes see this state (False: this process only)."""

    @property
    @abstractmethod
    def url(self) -> str:
        """Where the state lives, password redacted (``"memory"`` for this process)."""

    def key(self, name: str) -> str:
        """The full key (or channel) of ``name``: ``prefix + name``."""
        return self.prefix + name

    # -- limits -----------------------------------------------------------------------

    @abstractmethod
    async def take_token(self, name: str, *, capacity: int, per: float) -> float:
        """Take one token from the bucket ``name`` (``capacity`` tokens, refilled over ``per`` seconds).

        Returns 0.0 when a token was taken, else the seconds until one will be there.
        Atomic: concurrent takers never share a token.
        """

    @abstractmethod
    async def acquire_slot(self, name: str, holder: str, *, limit: int, lease: float) -> bool:
        """Hold one of ``limit`` slots of ``name`` as ``holder`` for ``lease`` seconds; False when all are held.

        A slot whose holder neither renews nor releases it is free again when its lease
        ends (a process killed mid-call does not keep its slots).
        """

    @abstractmethod
    async def renew_slot(self, name: str, holder: str, *, lease: float) -> None:
        """Extend ``holder``'s slot of ``name`` to ``lease`` seconds from now."""

    @abstractmethod
    async def release_slot(self, name: str, holder: str) -> None:
        """Give ``holder``'s slot of ``name`` back."""

    @abstractmethod
    async def increment(self, name: str, *, ttl: float, amount: int = 1) -> int:
        """Add ``amount`` to the counter ``name`` (0 when absent) and return it; the key lives ``ttl`` seconds."""

    # -- values -----------------------------------------------------------------------

    @abstractmethod
    async def claim(self, name: str, *, ttl: float, value: bytes = b"1") -> bool:
        """Set ``name`` only if absent (for ``ttl`` seconds): True for the one caller that set it."""

    @abstractmethod
    async def swap(self, name: str, value: bytes, *, ttl: float) -> bytes | None:
        """Set ``name`` to ``value`` (for ``ttl`` seconds) and return what it held before (None when absent).

        Atomic: of concurrent swaps of one value, one sees another value before, the others see it.
        """

    @abstractmethod
    async def get(self, name: str, *, refresh_ttl: float | None = None) -> bytes | None:
        """The value of ``name`` (None when absent); with ``refresh_ttl``, it lives that long from now."""

    @abstractmethod
    async def set(self, name: str, value: bytes, *, ttl: float) -> None:
        """Set ``name`` to ``value`` for ``ttl`` seconds."""

    @abstractmethod
    async def delete(self, name: str) -> None:
        """Remove ``name`` (nothing when absent)."""

    # -- messages ---------------------------------------------------------------------

    @abstractmethod
    async def publish(self, channel: str, message: bytes) -> None:
        """Send ``message`` to every subscriber of ``channel`` (in every process sharing the state)."""

    @abstractmethod
    def subscribe(self, channel: str) -> AbstractAsyncContextManager[AsyncIterator[bytes | Resync]]:
        """``async with backend.subscribe(channel) as messages: async for message in messages: ...``

        Subscribed once the block is entered; messages published afterwards are
        delivered in order. ``RESYNC`` stands for messages lost while the server was
        unreachable (the subscription comes back by itself).
        """

    # -- health and lifetime ------------------------------------------------------------

    @abstractmethod
    async def ping(self) -> float:
        """The seconds one round trip takes.

        Raises:
            StateUnavailableError: when the backend cannot be reached.
        """

    @abstractmethod
    async def aclose(self) -> None:
        """Close the connections (nothing for in-process state)."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()


@runtime_checkable
class UsesState(Protocol):
    """An object (a hook, an endpoint part) that keeps its state in a backend once given one."""

    def use_state(self, state: StateBackend) -> None:
        """Keep state in ``state`` from now on (unless given a backend of its own already)."""


def share_state(users: Iterable[object], state: StateBackend) -> None:
    """Give ``state`` to every object of ``users`` that keeps state (``UsesState``)."""
    for user in users:
        if isinstance(user, UsesState):
            user.use_state(state)
