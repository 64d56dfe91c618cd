"""``python -m cognizes``: the ``cognizes`` command (``cognizes.cli``), for a Python with no scripts on its PATH."""

import sys

from cognizes.cli import main

sys.exit(main())
