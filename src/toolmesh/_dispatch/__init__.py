"""Running calls: the registry and its snapshots, one call's execution, streams, invalid calls,
catalog changes and a turn's calls."""
