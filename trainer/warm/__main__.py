"""`python -m trainer.warm run|start|serve` (see trainer.warm)."""

import sys

from trainer.warm.commands import main

sys.exit(main(sys.argv[1:]))
