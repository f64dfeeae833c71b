"""The splitters' Unicode class tables (unicodeclasses.py), kept between runs: `regex` takes
60-110 ms to classify all 1,114,112 code points, in every process that splits a megabyte or more
(a tenth of a 10 MB training run); reading and checking them takes about 6 ms.

The tables depend only on the installed `regex` (its own Unicode data) and on how they are
built (its `recipe`: a digest of the code that builds them), so both name the file. It
lives in the derived-data cache folder (core/files/derivedcache.py: ours, 0700, written
atomically without following links) and carries the SHA-256 of its payload: a torn or foreign
file is ignored and the tables are built and kept again. What is read back is checked as far
as it can be without building the tables: every class is one the splitters know, and every code
point a contraction letter matches does match it. That a table is complete and right is what
the private folder vouches for, as for the merges kept beside it: someone who can write there
can already do anything as us.
"""

import re

import numpy as np
import regex

from tokworkbench.core.files.derivedcache import MAX_HEADER, framed, keep, read_kept, unframed

MAGIC = b"tokworkbench-unicode-classes 1\n"
CODE_POINTS = 0x110000
_MAX_FOLDS = 1 << 16  # code points a letter matches under (?i:), at most (a few in fact)


_VERSIONS = "unicode-classes-"  # every version's name starts so: few are kept (derivedcache._prune)


def _name(recipe: str) -> str:
    version = re.sub(r"[^A-Za-z0-9.+-]", "_", regex.__version__)  # a local build's too makes a file name
    return f"{_VERSIONS}regex-{version}-{recipe}.bin"


def store(recipe: str, table: np.ndarray, folds: dict[str, np.ndarray]) -> bool:
    """Keep the tables; False if they could not be written (the caller has them anyway)."""
    payload = table.astype(np.uint8).tobytes() + b"".join(folds[k].astype("<i8").tobytes() for k in folds)
    header = {"regex": regex.__version__, "recipe": recipe, "letters": "".join(folds),
              "folds": [len(folds[k]) for k in folds]}
    return keep(_name(recipe), framed(MAGIC, header, payload), siblings=_VERSIONS)


def load(recipe: str, letters: str, classes: int) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """The tables kept for this `regex` and `recipe`, or None when there are none or they do
    not check out (`classes`: how many there are). The arrays are writable and aligned, as
    built ones are: the compiled splitter keeps one version per array type, and a read-only
    one would be compiled anew."""
    data = read_kept(_name(recipe), len(MAGIC) + MAX_HEADER + CODE_POINTS + 8 * _MAX_FOLDS * len(letters))
    found = None if data is None else unframed(data, MAGIC)
    if found is None:
        return None
    header, payload = found
    try:
        counts = [int(n) for n in header["folds"]]
        fits = (header["regex"] == regex.__version__ and header["recipe"] == recipe and header["letters"] == letters
                and len(counts) == len(letters) and all(0 <= n <= _MAX_FOLDS for n in counts))
    except (ValueError, KeyError, TypeError, OverflowError):  # 1e999
        return None
    if not fits or len(payload) != CODE_POINTS + 8 * sum(counts):
        return None
    table = np.frombuffer(payload, dtype=np.uint8, count=CODE_POINTS).copy()
    if int(table.max()) >= classes:
        return None
    folds, at = {}, CODE_POINTS
    for letter, n in zip(letters, counts):
        points = np.frombuffer(payload, dtype="<i8", count=n, offset=at).astype(np.int64)
        at += 8 * n
        if n and not (0 <= points.min() and points.max() < CODE_POINTS
                      and all(regex.fullmatch(f"(?i:{letter})", chr(p)) for p in points.tolist())):
            return None
        folds[letter] = points
    return table, folds
