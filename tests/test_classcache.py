"""fastsplit's class tables kept between runs (core/text/classcache.py): read back, they are the
tables `regex` builds, of the same array types; anything that does not check out is not used."""

import json
import os

import numpy as np
import pytest

from tokworkbench.core import jit
from tokworkbench.core.files import derivedcache
from tokworkbench.core.text import classcache, fastsplit

LETTERS = "sdmtlver"


@pytest.fixture(autouse=True)
def cache_here(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def built():
    return fastsplit.build_tables()


def _path(recipe: int = fastsplit.TABLES_RECIPE):
    return derivedcache.cache_dir() / classcache._name(recipe)


def _same(a, b) -> None:
    assert np.array_equal(a[0], b[0]) and a[0].dtype == b[0].dtype
    assert list(a[1]) == list(b[1]) and all(np.array_equal(a[1][k], b[1][k]) for k in a[1])


def test_kept_tables_come_back_as_built_and_as_the_splitter_takes_them(built):
    assert classcache.load(fastsplit.TABLES_RECIPE, LETTERS) is None
    assert classcache.store(fastsplit.TABLES_RECIPE, *built)
    got = classcache.load(fastsplit.TABLES_RECIPE, LETTERS)
    _same(got, built)
    assert got[0].flags.writeable and got[0].flags.aligned and got[0].flags.c_contiguous
    assert oct(_path().stat().st_mode & 0o777) == "0o600"
    if jit.available():  # one compiled splitter for both: a read-only table would be another type
        import numba

        assert numba.typeof(got[0]) == numba.typeof(built[0])
        assert [numba.typeof(v) for v in got[1].values()] == [numba.typeof(v) for v in built[1].values()]


def _damaged(data: bytes) -> list[bytes]:
    end = data.index(b"\n", len(classcache.MAGIC))
    header = json.loads(data[len(classcache.MAGIC) : end])
    other_regex = json.dumps({**header, "regex": "0.0"}).encode()
    too_many = json.dumps({**header, "folds": header["folds"][:-1]}).encode()
    middle = len(data) // 2
    return [
        data[:-1],  # torn
        data[:middle] + bytes([data[middle] ^ 1]) + data[middle + 1 :],  # a flipped bit in the table
        data[:end] + data[end + 1 :],  # no end to the header
        b"something else\n" + data[len(classcache.MAGIC) :],
        data[: len(classcache.MAGIC)] + other_regex + data[end:],
        data[: len(classcache.MAGIC)] + too_many + data[end:],
        data[: len(classcache.MAGIC)] + b"{not json" + data[end:],
        b"",
    ]


def test_a_damaged_or_foreign_file_is_not_used(built):
    classcache.store(fastsplit.TABLES_RECIPE, *built)
    good = _path().read_bytes()
    for bad in _damaged(good):
        _path().write_bytes(bad)
        assert classcache.load(fastsplit.TABLES_RECIPE, LETTERS) is None
    _path().write_bytes(good)
    assert classcache.load(fastsplit.TABLES_RECIPE, LETTERS) is not None
    assert classcache.load(fastsplit.TABLES_RECIPE + 1, LETTERS) is None  # another recipe: another file
    assert classcache.load(fastsplit.TABLES_RECIPE, LETTERS[:-1]) is None


def test_a_link_in_its_place_is_not_followed(built, tmp_path):
    classcache.store(fastsplit.TABLES_RECIPE, *built)
    real = tmp_path / "elsewhere.bin"
    real.write_bytes(_path().read_bytes())
    _path().unlink()
    os.symlink(real, _path())
    assert classcache.load(fastsplit.TABLES_RECIPE, LETTERS) is None


def test_an_unwritable_cache_is_skipped(built, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert not classcache.store(fastsplit.TABLES_RECIPE, *built)
    assert classcache.load(fastsplit.TABLES_RECIPE, LETTERS) is None


def test_a_new_process_reads_the_tables_an_earlier_one_kept(built):
    """In the same cache folder (this test's, which the processes inherit)."""
    import subprocess
    import sys

    code = ("import numpy as np, sys; from tokworkbench.core.text import classcache, fastsplit; "
            "t, f = fastsplit._tables(); "
            "print(classcache.load(fastsplit.TABLES_RECIPE, 'sdmtlver') is not None, int(t.sum()))")
    env = dict(os.environ)
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == again.returncode == 0
    assert first.stdout.split() == again.stdout.split() == ["True", str(int(built[0].sum()))]
