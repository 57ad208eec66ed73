"""Tool search: a lexical index over a catalog's rows, host rankers, and which rows are deferred."""
