"""``python -m commodel.cluster ARGS`` is ``commodel cluster ARGS``."""

from __future__ import annotations

import sys

from ..cli.main import main

if __name__ == "__main__":
    sys.exit(main(["cluster", *sys.argv[1:]]))
