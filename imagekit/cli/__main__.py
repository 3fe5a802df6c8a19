"""``python -m imagekit.cli``: the ``imagekit`` command."""

import sys

from . import main

sys.exit(main())
