import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# The app picks its token colours by the terminal's colour depth (TERM, COLORTERM, NO_COLOR).
# Pin one for the pilot and snapshot tests, so they draw the same on every machine; the depths
# themselves are tested in test_render.py.
os.environ["TERM"] = "xterm-256color"
os.environ["COLORTERM"] = "truecolor"
os.environ.pop("NO_COLOR", None)
