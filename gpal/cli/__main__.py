"""``python -m gpal.cli``: the ``gpal`` command without its installed script."""

import sys

from gpal.cli.process import main

if __name__ == "__main__":  # importing this module (the docs' module check does) runs nothing
    sys.exit(main())
