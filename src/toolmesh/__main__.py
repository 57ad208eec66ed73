"""``python -m toolmesh``: the ``toolmesh`` command, for when the console script is not on PATH."""

from __future__ import annotations

from toolmesh._cli.main import main

if __name__ == "__main__":
    main()
