"""2026-07-28 clients on `--stateless` replicas behind HAProxy: any replica answers any request."""

from __future__ import annotations

import itertools

import anyio

from _replicas import replicas

CALLS = 150


async def test_modern_clients_call_hundreds_of_times_each_request_on_another_replica() -> None:
    async with replicas(3, stateless=True) as mesh:
        with anyio.fail_after(240):
            async with mesh.client("2026-07-28") as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                assert names == ["add", "whoami", "ask_name", "stamp", "chatty", "nap"]
                answered = []
                for n in range(CALLS):
                    result = await client.call_tool("add", {"a": n, "b": 1})
                    assert not result.is_error, result
                    assert result.content[0].text == str(n + 1)  # type: ignore[union-attr]
                    answered.append((await client.call_tool("whoami", {})).content[0])
    assert set(mesh.statuses) == {200}
    assert len(mesh.served) >= 2 * CALLS
    assert set(mesh.served) == {"replica1", "replica2", "replica3"}
    assert all(first != second for first, second in itertools.pairwise(mesh.served))
    # the tool ran where HAProxy says the request went
    assert {getattr(block, "text", "") for block in answered} == {"replica1", "replica2", "replica3"}
