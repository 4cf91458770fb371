"""``python -m commodel`` runs the ``commodel`` command."""

import sys

from .cli.main import main

sys.exit(main())
