"""serve.audit and serve.metrics of toolmesh.json: checked at load, turned into the gateway's observers."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from toolmesh import ServerConfigError, ToolRegistry
from toolmesh.gateway import GatewayConfig
from toolmesh.gateway._config.observing import AuditSettings, MetricsSettings, observing
from toolmesh.hooks import AuditLog, CallMetrics


def _load(folder: Path, serve: dict[str, Any]) -> GatewayConfig:
    path = folder / "toolmesh.json"
    path.write_text(json.dumps({"serve": serve}), encoding="utf-8")
    return GatewayConfig.load(path)


def test_audit_and_metrics_load_with_paths_from_the_config_folder(tmp_path: Path) -> None:
    config = _load(tmp_path, {"audit": {"file": "audit.jsonl"}, "metrics": {"prometheus": {"port": 9100}}})
    assert config.serve.audit == AuditSettings(tmp_path / "audit.jsonl", arguments=False)
    assert config.serve.metrics == MetricsSettings("127.0.0.1", 9100)
    assert _load(tmp_path, {"audit": {"file": "-", "arguments": True}}).serve.audit == AuditSettings(None, True)
    assert _load(tmp_path, {"metrics": {}}).serve.metrics == MetricsSettings(None)
    listed = {"prometheus": {"host": "0.0.0.0", "allowedHosts": ["metrics.internal:*"]}}
    assert _load(tmp_path, {"metrics": listed}).serve.metrics == MetricsSettings(
        "0.0.0.0", 9464, ("metrics.internal:*",)
    )
    plain = _load(tmp_path, {})
    assert (plain.serve.audit, plain.serve.metrics) == (None, None)


@pytest.mark.parametrize(
    ("serve", "expected"),
    [
        ({"audit": {"file": "missing/audit.jsonl"}}, "serve.audit.file"),
        ({"audit": {"file": " "}}, "serve.audit.file"),
        ({"audit": {}}, "serve.audit.file"),
        ({"audit": {"file": "a.jsonl", "argument": True}}, "serve.audit.argument"),
        ({"metrics": {"prometheus": {"port": 70000}}}, "serve.metrics.prometheus.port"),
    ],
)
def test_every_mistake_names_its_key(tmp_path: Path, serve: dict[str, Any], expected: str) -> None:
    with pytest.raises(ServerConfigError, match=expected.replace(".", r"\.")):
        _load(tmp_path, serve)


def test_observing_attaches_the_audit_file_for_the_block_only(tmp_path: Path) -> None:
    logger = logging.getLogger("toolmesh.audit")
    before = list(logger.handlers)
    with observing(AuditSettings(tmp_path / "a.jsonl"), MetricsSettings("127.0.0.1", 0), ToolRegistry()) as found:
        audit, metrics = found.observers
        assert isinstance(audit, AuditLog) and isinstance(metrics, CallMetrics)
        assert found.prometheus is not None and metrics.meter_provider is found.prometheus.meter_provider
        assert len(logger.handlers) == len(before) + 1 and not logger.propagate
        logger.info("a line")
    assert logger.handlers == before and logger.propagate
    assert (tmp_path / "a.jsonl").read_text() == "a line\n"


def test_without_settings_or_a_global_meter_provider_nothing_observes() -> None:
    with observing(None, None, ToolRegistry()) as found:
        assert found.observers == [] and found.prometheus is None
