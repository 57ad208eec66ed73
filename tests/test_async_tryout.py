"""What a new user's tryout of elicitation, sampling, tasks and logs found (issue 10's follow-ups)."""

from __future__ import annotations

from _asking import Recorder, answer_of, asking_stdio
from toolmesh import ErrorKind, ToolRegistry


async def test_a_classic_python_sdk_elicitation_on_2026_says_to_pin_2025_11_25() -> None:
    host = Recorder("host")
    async with ToolRegistry(elicitation=host.elicit) as registry:
        connection = await registry.connect(asking_stdio("auto", include=["ask_classic"]))
        assert connection.protocol_version == "2026-07-28"
        failed = await registry.dispatch("ask__ask_classic")
        assert failed.error is not None and failed.error.kind is ErrorKind.UPSTREAM_ERROR
        assert "no back-channel" in failed.error.message
        assert 'set protocol="2025-11-25"' in failed.error.message
        await registry.connect(asking_stdio("2025-11-25", "legacy", include=["ask_classic"]))
        answered = await registry.dispatch("legacy__ask_classic")
    assert answer_of(answered)["name"].startswith("host:")
