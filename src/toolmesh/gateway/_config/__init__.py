"""``toolmesh.json``: the gateway's config, its keys, profiles, tokens and HTTP settings."""
