import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

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

# Compiled code is loaded only once a process has enough work for it (core/jit.py); the tests'
# texts are small, and they are to run the compiled paths all the same (test_jit_policy.py
# checks the bar itself, in processes of its own).
os.environ["TOKWORKBENCH_JIT_FROM"] = "0"

# Hypothesis: no per-example deadline anywhere (the tests that set their own settings already say
# deadline=None). On a loaded machine, or beside a second pytest worker, an example that takes
# 200 ms once fails as DeadlineExceeded or Flaky though nothing is wrong; a test that really hangs
# is still stopped by pytest-timeout. too_slow, the health check on slow data generation, is off
# for the same reason: it measures the machine, not the code.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("tokworkbench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tokworkbench")


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (addopts): a worker more than the cores. Many tests spend part of their time
    waiting (a subprocess, a pilot's pause, a socket), and a third worker fills those waits: on
    the 2-core machine the suite took 476 s this way against 508 s with two."""
    return (os.cpu_count() or 1) + 1


@pytest.fixture(scope="module")
def numpy_path():
    """The numpy/Python training path, for a module that tests its own machinery
    (`pytestmark = pytest.mark.usefixtures("numpy_path")`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKWORKBENCH_NO_JIT", "1")
        yield
