import time

# The process's first line of Python: the studio's startup timeline of this run starts
# its trainer here (trainer.reporting.startup), before any import of ours.
STARTED_AT = time.time()

import sys  # noqa: E402

from trainer.commands.cli import main  # noqa: E402
from trainer.reporting import startup  # noqa: E402

startup.begin(STARTED_AT)
sys.exit(main())
