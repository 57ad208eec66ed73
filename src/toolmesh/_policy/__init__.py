"""Ready-made hooks: allow/deny rules, limits and definition pinning."""
