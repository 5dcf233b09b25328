"""``python -m groupcheck``: the same command line as the ``groupcheck`` script."""

import sys

from groupcheck.cli import main

sys.exit(main())
