"""``python -m ragsift.cli``: the command line."""
import sys

from ragsift.cli import main

sys.exit(main())
