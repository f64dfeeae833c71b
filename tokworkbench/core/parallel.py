"""Pre-tokenize and count chunks on all cores.

The preset patterns always start a new chunk at a single space that sits between two
non-whitespace characters, and nothing they match looks behind or past such a space; so text
cut there pre-tokenizes to exactly the same chunks as the whole (tests check this for every
preset). Pieces are counted in worker processes and the counts merged in text order, which also
keeps every chunk's order of first appearance.
"""

import multiprocessing
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

from .pretokenize import PreTokenizer

MIN_PARALLEL = 4_000_000  # characters; below this, starting processes costs more than it saves
PIECE = 1_000_000  # characters pre-tokenized at a time: bounds the memory of the chunk lists


def safe_cut(text: str, start: int, stop: int) -> int:
    """The first position in [start, stop) where a space sits between two non-whitespace
    characters (the cut goes before the space), or -1."""
    i = text.find(" ", max(start, 1), stop)
    while i != -1:
        if i + 1 < len(text) and not text[i - 1].isspace() and not text[i + 1].isspace():
            return i
        i = text.find(" ", i + 1, stop)
    return -1


def cut_text(text: str, parts: int) -> list[str]:
    """`text` in about `parts` pieces, cut only where the presets always cut."""
    pieces, pos = [], 0
    step = max(1, len(text) // parts)
    for k in range(1, parts):
        at = safe_cut(text, max(pos + 1, k * step), len(text))
        if at == -1:
            break
        pieces.append(text[pos:at])
        pos = at
    pieces.append(text[pos:])
    return pieces


def _count(pre: PreTokenizer, pieces: list[str]) -> Counter:
    counter: Counter = Counter()
    for piece in pieces:
        counter.update(pre.split(piece))
    return counter


def can_parallelize(pre: PreTokenizer, chars: int) -> bool:
    return pre.is_preset_pattern and chars >= MIN_PARALLEL and (os.cpu_count() or 1) > 1


def count_parallel(texts: list[str], pre: PreTokenizer, workers: int | None = None) -> Counter:
    """Chunk counts of `texts` (already normalized), in order of first appearance."""
    workers = workers or min(os.cpu_count() or 1, 8)
    total = sum(len(t) for t in texts)
    pieces: list[str] = []
    for t in texts:
        pieces += cut_text(t, max(1, len(t) // PIECE))
    groups: list[list[str]] = [[] for _ in range(workers)]
    budget, g, used = total / workers, 0, 0
    for piece in pieces:
        if used >= budget * (g + 1) and g < workers - 1:
            g += 1
        groups[g].append(piece)
        used += len(piece)
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(_count, pre, group) for group in groups if group]
        merged: Counter = Counter()
        for future in futures:  # in text order, so first appearances keep their order
            for chunk, n in future.result().items():
                merged[chunk] = merged.get(chunk, 0) + n
    return merged


def _encode(tokenizer, pieces: list[str]) -> list[int]:
    out: list[int] = []
    for piece in pieces:
        out += tokenizer._encode_normalized(piece, 0)
    return out


def encode_parallel(tokenizer, text: str, workers: int | None = None) -> list[int]:
    """Internal ids of normalized `text`, its cut pieces encoded in worker processes."""
    workers = workers or min(os.cpu_count() or 1, 8)
    pieces = cut_text(text, max(workers, len(text) // PIECE))
    size = -(-len(pieces) // workers)
    groups = [pieces[i : i + size] for i in range(0, len(pieces), size)]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        parts = list(pool.map(_encode, [tokenizer] * len(groups), groups))
    out: list[int] = []
    for part in parts:
        out += part
    return out
