"""Load test: N concurrent browser sessions against one local `streamlit run app.py` (harness/load/ says what it does
and how it counts). Prints figures; not a CI test.

    python bench/load_test.py [--sessions 30] [--interactions 10] [--pages playground,causal,heads,...]
                              [--waves 2] [--port 0] [--ttl 10] [--think 1.0] [--timeout 1800]
                              [--snapshot [REV]] [--nice-browser 19] [--browsers K] [--out FILE]   (--help: all)
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.load.run import main  # noqa: E402

if __name__ == "__main__":
    main()
