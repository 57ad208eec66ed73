"""Observing calls: one record per finished call (``CallObserver``), written as audit lines or metrics.

``record`` (``CallRecord``), ``observer`` (the hook that makes records), ``audit``
(``AuditLog``: JSON lines to a logger), ``metrics`` (``CallMetrics``: OpenTelemetry
instruments), ``prometheus`` (a meter provider a Prometheus server scrapes).
"""
