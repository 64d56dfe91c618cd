#!/usr/bin/env python
"""Django's command-line utility for a checkout of Cognizes: the ``cognizes`` command (``cognizes.cli``)."""

import sys

from cognizes.cli import main

if __name__ == "__main__":
    sys.exit(main())
