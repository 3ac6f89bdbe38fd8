"""``python -m clawctx.cli``: the ``clawctx`` command."""

import sys

from clawctx.cli import main

if __name__ == "__main__":
    sys.exit(main())
