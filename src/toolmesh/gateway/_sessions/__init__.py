"""2025-11-25 sessions that any replica serves: the session record, SSE events and answers in Redis."""
