"""``python -m commodel`` runs the ``commodel`` command.

Guarded: ``python -m mpi4py.futures -m commodel ...`` imports this module again in each
worker (under another ``__name__``), where it must not run the command.
"""

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
