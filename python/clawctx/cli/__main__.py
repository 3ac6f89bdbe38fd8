"""``python -m clawctx.cli``: the ``clawctx`` command."""

import sys

from clawctx.cli import main

sys.exit(main())
