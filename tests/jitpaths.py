"""A module's tests run twice: with the compiled kernels and with the numpy path they stand in for.

    from jitpaths import both_paths
    jit_path = both_paths()  # an autouse fixture; a test may ask for `jit_path` to know which
"""

import pytest

from tokworkbench.core import jit


def both_paths():
    @pytest.fixture(scope="module", params=["compiled", "numpy"], autouse=True)
    def jit_path(request):
        if request.param == "compiled" and not jit.available():
            pytest.skip("numba is not installed here")
        with pytest.MonkeyPatch.context() as patch:
            if request.param == "numpy":
                patch.setenv(jit.OFF_VARIABLE, "1")
            yield request.param

    return jit_path
