"""``python -m rulegen`` runs the command line."""

import sys

from rulegen.cli import main

sys.exit(main())
