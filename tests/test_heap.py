"""The heap thresholds the EM engine sets: taken on glibc, a no-op elsewhere, never an error."""

import platform

import pytest

from tokworkbench.core import heap


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt's thresholds are glibc's")
def test_glibc_takes_the_thresholds():
    assert heap.keep_large_frees() is True


def test_without_a_c_library_it_does_nothing(monkeypatch):
    def no_library(name):
        raise OSError("no C library")

    monkeypatch.setattr(heap.ctypes, "CDLL", no_library)
    assert heap.keep_large_frees() is False


def test_a_c_library_without_mallopt_is_left_alone(monkeypatch):
    class NoMallopt:
        def __init__(self, name):
            pass

    monkeypatch.setattr(heap.ctypes, "CDLL", NoMallopt)
    assert heap.keep_large_frees() is False


def test_settle_sets_the_live_objects_aside_and_can_drop_the_old_ones():
    import gc

    try:
        heap.settle()
        assert gc.get_freeze_count() > 0
        held = [[n] for n in range(100)]
        heap.settle(drop_old=True)  # the earlier set-aside is walked again, then all set aside
        assert gc.get_freeze_count() >= len(held)
    finally:
        gc.unfreeze()
