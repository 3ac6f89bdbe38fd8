"""Tests of the ``clawctx`` command line, one module per command (``python/clawctx/cli/``)."""
