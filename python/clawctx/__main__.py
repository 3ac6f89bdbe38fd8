"""``python -m clawctx``."""

import sys

from clawctx.cli import main

sys.exit(main())
