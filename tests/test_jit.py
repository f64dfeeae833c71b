"""core/jit.py: the compiled path can be turned off, and is on where numba imports."""

import importlib.util

from tokworkbench.core import jit


def test_the_variable_turns_the_compiled_path_off_and_on(monkeypatch):
    monkeypatch.setenv(jit.OFF_VARIABLE, "1")
    assert not jit.available()
    monkeypatch.setenv(jit.OFF_VARIABLE, "0")
    assert jit.available() == (importlib.util.find_spec("numba") is not None)
    monkeypatch.delenv(jit.OFF_VARIABLE)
    assert jit.available() == (importlib.util.find_spec("numba") is not None)
