"""``python -m judgepanel.cli ARGS``: the ``judgepanel`` command, run by the interpreter."""

import sys

from judgepanel.cli import main

if __name__ == "__main__":  # imported (by a walk over the package), it does nothing
    sys.exit(main())
