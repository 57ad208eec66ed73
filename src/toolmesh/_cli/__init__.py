"""The ``toolmesh`` command: the app, the catalog commands (tools, call, export), check and serve."""
