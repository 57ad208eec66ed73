"""The gateway's Responses endpoint (``POST /v1/responses``): requests, declared servers, the
upstream model, turns and events."""
