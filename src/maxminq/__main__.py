"""``python -m maxminq COMMAND ...``: the ``maxminq`` command, for an environment where its
console script is not on ``PATH`` (e.g. a venv that is not activated)."""

import sys

from maxminq.cli import main

if __name__ == "__main__":
    sys.exit(main())
