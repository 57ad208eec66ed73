"""The gateway as an OAuth 2.1 resource server: access tokens checked, metadata served, callers identified."""
