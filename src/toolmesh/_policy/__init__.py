"""Ready-made hooks: allow/deny rules, approval, limits and definition pinning."""
