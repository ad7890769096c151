import sys

from trainer.commands.cli import main

sys.exit(main())
