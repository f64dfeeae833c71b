import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

# The app picks its token colours by the terminal's colour depth (TERM, COLORTERM, NO_COLOR).
# Pin one for the pilot and snapshot tests, so they draw the same on every machine; the depths
# themselves are tested in test_render.py.
os.environ["TERM"] = "xterm-256color"
os.environ["COLORTERM"] = "truecolor"
os.environ.pop("NO_COLOR", None)

# Loading a big ranks file keeps its recovered merges under $XDG_CACHE_HOME/tokworkbench/
# (files/derivedcache.py): tests, and the command lines they start, write to a folder of
# their own, never to the real home's cache.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="tokworkbench-test-cache-")
atexit.register(shutil.rmtree, os.environ["XDG_CACHE_HOME"], True)
