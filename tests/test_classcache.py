"""The splitters' class tables (core/text/unicodeclasses.py) kept between runs (classcache.py):
read back, they are the tables `regex` builds, of the same array types; anything that does not
check out is not used."""

import json
import os

import numpy as np
import pytest

from tokworkbench.core import jit
from tokworkbench.core.files import derivedcache
from tokworkbench.core.text import classcache, unicodeclasses

LETTERS = "sdmtlver"
CLASSES = unicodeclasses.APOS + 1
RECIPE = unicodeclasses.tables_recipe()


@pytest.fixture(autouse=True)
def cache_here(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def built():
    return unicodeclasses.build_tables()


def _path(recipe: str = RECIPE):
    return derivedcache.cache_dir() / classcache._name(recipe)


def _same(a, b) -> None:
    assert np.array_equal(a[0], b[0]) and a[0].dtype == b[0].dtype
    assert list(a[1]) == list(b[1]) and all(np.array_equal(a[1][k], b[1][k]) for k in a[1])


def test_kept_tables_come_back_as_built_and_as_the_splitter_takes_them(built):
    assert classcache.load(RECIPE, LETTERS, CLASSES) is None
    assert classcache.store(RECIPE, *built)
    got = classcache.load(RECIPE, LETTERS, CLASSES)
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
        data[: len(classcache.MAGIC)] + json.dumps(header).encode().replace(b'"folds": [', b'"folds": [1e999, ') + data[end:],
        data[: len(classcache.MAGIC)] + b"[" * 2000 + b"]" * 2000 + data[end:],  # nests past the parser
        b"",
    ]


def test_a_damaged_or_foreign_file_is_not_used(built):
    classcache.store(RECIPE, *built)
    good = _path().read_bytes()
    for bad in _damaged(good):
        _path().write_bytes(bad)
        assert classcache.load(RECIPE, LETTERS, CLASSES) is None
    _path().write_bytes(good)
    assert classcache.load(RECIPE, LETTERS, CLASSES) is not None
    assert classcache.load("another", LETTERS, CLASSES) is None  # another recipe: another file
    assert classcache.load(RECIPE, LETTERS[:-1], CLASSES) is None


def test_a_well_formed_file_of_impossible_tables_is_not_used(built):
    """A class no splitter knows (it would index past the kinds), a code point past Unicode,
    or one its letter does not match, each under a correct digest."""
    table, folds = built
    wrong_class = table.copy()
    wrong_class[0x41] = CLASSES
    for bad in ((wrong_class, folds), (table, {**folds, "s": np.append(folds["s"], 0x110000)}),
                (table, {**folds, "t": np.append(folds["t"], ord("x"))}), (table, {**folds, "e": np.array([-1])})):
        assert classcache.store(RECIPE, *bad)
        assert classcache.load(RECIPE, LETTERS, CLASSES) is None
    assert classcache.store(RECIPE, *built)
    _same(classcache.load(RECIPE, LETTERS, CLASSES), built)


def test_the_recipe_names_the_code_that_builds_the_tables(monkeypatch):
    assert RECIPE and RECIPE == unicodeclasses.tables_recipe()
    monkeypatch.setattr(unicodeclasses, "CONTRACTION_LETTERS", "sdmtlve")
    assert unicodeclasses.tables_recipe() != RECIPE


def test_a_link_in_its_place_is_not_followed(built, tmp_path):
    classcache.store(RECIPE, *built)
    real = tmp_path / "elsewhere.bin"
    real.write_bytes(_path().read_bytes())
    _path().unlink()
    os.symlink(real, _path())
    assert classcache.load(RECIPE, LETTERS, CLASSES) is None


def test_an_unwritable_cache_is_skipped(built, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert not classcache.store(RECIPE, *built)
    assert classcache.load(RECIPE, LETTERS, CLASSES) is None


def test_a_new_process_reads_the_tables_an_earlier_one_kept(built):
    """In the same cache folder (this test's, which the processes inherit): the second may not
    build them."""
    import subprocess
    import sys

    code = ("import sys; from tokworkbench.core.text import unicodeclasses\n"
            "if sys.argv[1] == 'read':  # building scans with finditer; reading does not\n"
            "    unicodeclasses.regex.finditer = lambda *args, **kw: sys.exit('built again')\n"
            "table, folds = unicodeclasses.tables()\n"
            "print(int(table.sum()), sum(len(v) for v in folds.values()))")
    runs = [subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, env=dict(os.environ),
                           timeout=120) for how in ("build", "read")]
    expected = [str(int(built[0].sum())), str(sum(len(v) for v in built[1].values()))]
    assert [(r.returncode, r.stdout.split(), r.stderr) for r in runs] == [(0, expected, "")] * 2


def test_tables_of_other_recipes_are_superseded_and_only_a_few_stay(built):
    for recipe in ("r1", "r2", "r3", "r4"):
        assert classcache.store(recipe, *built)
    kept = sorted(p.name for p in derivedcache.cache_dir().iterdir())
    assert len(kept) == derivedcache.SIBLINGS_KEPT and _path("r4").name in kept
    _same(classcache.load("r4", LETTERS, CLASSES), built)
