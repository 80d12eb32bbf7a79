"""``python -m behaviortk`` is the ``behaviortk`` command."""

import sys

from behaviortk.cli import main

sys.exit(main())
