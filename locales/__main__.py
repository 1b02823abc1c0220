"""`python -m locales compile`: the translations' catalogues compiled (the container image's build)."""

import sys

from locales import main

raise SystemExit(main(sys.argv[1:]))
