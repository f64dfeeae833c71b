"""The class of every code point as `regex` sees it, which fastsplit's numpy scan and the
compiled splitter (splitkernel.py) read: one table over all 1,114,112 code points, and the code
points each contraction letter matches under `(?i:)`.

`regex` itself builds them, from its own Unicode data, so the splitters and `regex` always agree
on what a letter is: 0.06-0.2 s. They are kept for later processes (classcache.py), named by the
installed `regex` and a digest of the code below (`tables_recipe`).
"""

import hashlib
import inspect
from functools import lru_cache

import numpy as np
import regex

from tokworkbench.core.text import classcache

# Character classes (one table over all code points, built from `regex`'s own properties).
P, WS, SP, NL, NUM, UP, LOW, OTH, MARK, APOS = range(10)
# P: none of the others; WS: \s but not \r \n or space; SP: U+0020; NL: \r \n; NUM: \p{N};
# UP: Lu Lt; LOW: Ll; OTH: Lm Lo; MARK: \p{M}; APOS: U+0027.
CONTRACTION_LETTERS = "sdmtlver"


@lru_cache(maxsize=1)
def tables() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The class of every code point, and for each contraction letter the code points that
    `(?i:x)` matches (`regex` folds case simply: `ſ` matches `s`): as kept by an earlier
    process for the same `regex` and the same `build_tables`, else built and kept."""
    recipe = tables_recipe()
    found = classcache.load(recipe, CONTRACTION_LETTERS, APOS + 1) if recipe else None
    if found is None:
        found = build_tables()
        if recipe:
            classcache.store(recipe, *found)
    return found


def tables_recipe() -> str | None:
    """A digest of how the tables are built (the code, the classes, the letters), which names
    a kept table: a change to any of them reads no table kept before it. None where the code
    cannot be read (then nothing is kept)."""
    try:
        source = inspect.getsource(build_tables)
    except (OSError, TypeError):
        return None
    recipe = repr((source, (P, WS, SP, NL, NUM, UP, LOW, OTH, MARK, APOS), CONTRACTION_LETTERS))
    return hashlib.sha256(recipe.encode("utf-8")).hexdigest()[:16]


def build_tables() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    everything = np.arange(0x110000, dtype=np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
    table = np.zeros(0x110000, dtype=np.uint8)
    for cls, pattern in ((WS, r"\s+"), (NUM, r"\p{N}+"), (UP, r"[\p{Lu}\p{Lt}]+"), (LOW, r"\p{Ll}+"),
                         (OTH, r"[\p{Lm}\p{Lo}]+"), (MARK, r"\p{M}+")):
        for m in regex.finditer(pattern, everything):
            table[m.start() : m.end()] = cls
    table[[0x0D, 0x0A]] = NL
    table[0x20] = SP
    table[0x27] = APOS
    # a few code points per letter: kept as short arrays (a mask over all code points per
    # letter was 9 MB of the process, for the whole run)
    hits = [m.start() for m in regex.finditer(f"(?i:[{CONTRACTION_LETTERS}])", everything)]
    folds = {letter: np.array([h for h in hits if regex.fullmatch(f"(?i:{letter})", chr(h))], dtype=np.int64)
             for letter in CONTRACTION_LETTERS}
    return table, folds


@lru_cache(maxsize=1)
def fold_table() -> np.ndarray:
    """The contraction letter (its ASCII code) each code point matches under `(?i:)`, or 0."""
    _, folds = tables()
    fold = np.zeros(0x110000, dtype=np.uint8)
    for letter, points in folds.items():
        fold[points] = ord(letter)
    return fold


@lru_cache(maxsize=1)
def exact_fold_table() -> np.ndarray:
    """`fold_table` without `(?i:)`: each contraction letter matches itself only (gpt2's)."""
    fold = np.zeros(0x110000, dtype=np.uint8)
    fold[[ord(c) for c in CONTRACTION_LETTERS]] = list(map(ord, CONTRACTION_LETTERS))
    return fold
