"""`python -m trainer.playground`: the model server a studio submits as a Ray job."""

import sys

from trainer.playground.server import main

sys.exit(main())
