"""Count corpus files from their bytes, a block at a time: no whole-file str is ever made.

Read whole, a 100 MB file was its bytes plus a str of it, and one emoji makes that str 4 bytes
a character (CPython stores a str at the width of its widest character): 500 MB at the peak of
a run whose training then needed 360 MB. Here a file is read in blocks of at most about BLOCK
bytes, each cut only where the parallel counter may cut the normalized text (`safe_cut`),
judged on the raw bytes:
- before a space byte (0x20) that has a printable ASCII character (0x21-0x7E) on both sides;
- before a line break (CR or LF) whose preceding character, normalized on its own, ends in a
  letter or digit (what cuts text written without spaces).
ASCII bytes never occur inside a multi-byte UTF-8 sequence, and neither a printable ASCII
character nor a line break composes under NFC or NFKC, so each block decodes and normalizes on
its own to exactly its part of the whole file, and a preset pattern splits it into exactly the
whole file's chunks (tests/test_block_counting.py checks this with blocks cut anywhere). Where a
file has no such place left (one long line without ASCII spaces), the rest is one block. The
Dask engine cuts its byte ranges by the same rule.

The parent only plans the cuts (a small read near each one); the workers read and count their
own consecutive blocks and send back counts, merged in text order so every chunk keeps its
order of first appearance. Custom patterns and `none` may match across any cut: their files are
read whole, as before.
"""

import os
import re
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import regex

from tokworkbench.core.errors import CorpusError, InvalidUtf8Error, StoppedShare
from tokworkbench.core.text.chunks import ChunkCounts, count_chunks
from tokworkbench.core.text.corpus import (
    MAX_CORPUS_FILE_BYTES,
    Skipped,
    binary_file,
    iter_documents,
    list_files,
    opened_regular,
    os_reason,
)
from tokworkbench.core.text.fastsplit import FAST_FROM, ChunkTally
from tokworkbench.core.text.normalize import normalize
from tokworkbench.core.text.parallel import (
    COUNT_PIECE,
    MIN_PARALLEL,
    can_fork,
    cut_points,
    fork_map,
    split_evenly,
    thread_map,
    worker_count,
)
from tokworkbench.core.text.pretokenize import PreTokenizer

BLOCK = 4 << 20  # bytes a block holds at most, nominally (a worker holds ~6x this at its peak)
MIN_BLOCK = 1 << 18  # and at least: smaller blocks only add reads
SHARE_BLOCKS = 8  # blocks per worker at least, so shares stay even when a corpus is small
COMPILED_COUNT_PIECE = 1_000_000  # characters: code points and starts, ~12 bytes a character
SNIFF = 8192  # bytes looked at for a NUL, as `decode_document` does
_CUT = re.compile(rb"(?<=[\x21-\x7e]) (?=[\x21-\x7e])|[\r\n]")
_LETTER_OR_NUMBER = regex.compile(r"[\p{L}\p{N}]")
_BACK = 4  # bytes a cut looks back: the longest UTF-8 character before a line break
_WINDOW = 1 << 16  # bytes read at a time while looking for a cut


@dataclass(frozen=True)
class Block:
    """Bytes [start, stop) of one corpus file (document number `doc`, counting from 1)."""

    doc: int
    path: str
    start: int
    stop: int


def find_cut(data: bytes, start: int, normalizer: str = "none") -> int:
    """The first cut position p >= start in `data` (the cut goes before byte p), or -1."""
    for m in _CUT.finditer(data, max(start, 1)):
        p = m.start()
        if data[p] == 0x20 or _ends_in_letter_or_number(data, p, normalizer):
            return p
    return -1


def _ends_in_letter_or_number(data: bytes, p: int, normalizer: str) -> bool:
    """Whether the character that ends just before byte p, normalized, ends in a letter or digit."""
    q = p - 1
    while q > 0 and p - q < _BACK and data[q] & 0xC0 == 0x80:  # continuation bytes
        q -= 1
    try:
        char = normalize(data[q:p].decode("utf-8"), normalizer)
    except UnicodeDecodeError:  # not a whole character: not a cut (the decoder reports bad text)
        return False
    return bool(char) and _LETTER_OR_NUMBER.match(char[-1]) is not None


def cut_in_file(f, offset: int, size: int, normalizer: str) -> int:
    """The first cut at or after `offset` in the open binary file, or `size` when there is none."""
    if offset <= 0:
        return 0
    window = _WINDOW  # read when called: tests shrink it to put seams anywhere
    pos = max(0, offset - _BACK)
    from_ = offset
    while pos < size:
        f.seek(pos)
        data = f.read(window + _BACK + 1)
        at = find_cut(data, from_ - pos, normalizer)
        if at != -1:
            return pos + at
        if len(data) < window + _BACK + 1:
            break
        # windows overlap by _BACK + 1 bytes: a candidate near the seam is judged again with
        # its whole context (the character before it, the byte after it)
        pos += window
        from_ = pos + _BACK
    return size


def plan_blocks(files: list[tuple[int, str, int]], normalizer: str, block: int) -> list[Block]:
    """The blocks of (doc, path, size) files, in text order: cut at the first cut at or after
    every `block` bytes. An empty file is one empty block (it is still a document)."""
    out: list[Block] = []
    for doc, path, size in files:
        bounds = [0]
        if size > block:
            with open(path, "rb") as f:
                for nominal in range(block, size, block):
                    if nominal <= bounds[-1]:
                        continue  # the last cut already lies past it (a long line without cuts)
                    at = cut_in_file(f, nominal, size, normalizer)
                    if at >= size:
                        break
                    bounds.append(at)
        bounds.append(size)
        out += [Block(doc, path, a, b) for a, b in zip(bounds, bounds[1:])]
    return out


def read_block(b: Block, errors: str = "strict") -> str:
    """The text of one block, its decoding errors named by their offset in the file."""
    try:
        with open(b.path, "rb") as f:
            f.seek(b.start)
            data = f.read(b.stop - b.start)
    except OSError as exc:
        raise CorpusError(f"cannot read {b.path}: {os_reason(exc)}") from None
    if len(data) != b.stop - b.start:
        raise CorpusError(f"cannot read {b.path}: it changed size while it was read")
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise InvalidUtf8Error(f"{b.path}: not valid UTF-8 at byte offset {b.start + exc.start} (byte 0x{bad}); "
                               "convert the file to UTF-8") from None


def count_blocks(blocks: list[Block], normalizer: str, pre: PreTokenizer, errors: str = "strict",
                 stop: threading.Event | None = None, compiled: bool | None = None) -> tuple[Counter, int, int]:
    """Chunk counts of consecutive blocks in order of first appearance, with their characters
    and UTF-8 bytes after normalizing. Each block is split a COUNT_PIECE at a time, so only one
    piece's chunk list exists at once. Compiled counting makes no such list and keeps one tally
    for all the blocks, so no piece's counts are merged here in Python. `stop` (thread_map's):
    set, the next piece raises StoppedShare. `compiled`: count_files' choice, so that threads
    count compiled and forks do not (None: chosen here by the blocks' size)."""
    counter: Counter = Counter()
    if compiled is None:
        compiled = pre.counts_compiled(sum(b.stop - b.start for b in blocks))
    tally = ChunkTally(pre.name) if compiled else None
    chars = nbytes = 0
    for b in blocks:
        text = normalize(read_block(b, errors), normalizer)
        chars += len(text)
        nbytes += len(text) if text.isascii() else len(text.encode("utf-8"))
        bounds = cut_points(text, max(1, len(text) // (COMPILED_COUNT_PIECE if tally else COUNT_PIECE)))
        for i, j in zip(bounds, bounds[1:]):
            if stop is not None and stop.is_set():
                raise StoppedShare("another share failed")
            if tally is not None:
                tally.add(text[i:j])
            else:
                counter.update(pre.counts(text[i:j]))
        del text
    return (tally.counter() if tally is not None else counter), chars, nbytes


def block_size(total: int, workers: int) -> int:
    """Blocks small enough that each worker gets several (shares of whole blocks stay even),
    and no larger than BLOCK."""
    return max(MIN_BLOCK, min(BLOCK, total // (workers * SHARE_BLOCKS) or 1))


def count_files(
    paths: Iterable[str | Path],
    normalizer: str,
    pre: PreTokenizer,
    errors: str = "strict",
    skipped: list[str] | None = None,
    report: Skipped | None = None,
    workers: int | None = None,
    block: int | None = None,
) -> ChunkCounts:
    """What `count_chunks` gives for the documents `iter_documents` reads from `paths`, read and
    counted a block at a time (on all cores when the corpus is large enough). `block` fixes
    the nominal block size (tests); the counts never depend on it."""
    if not pre.is_preset_pattern:
        return count_chunks((d.text for d in iter_documents(paths, errors, skipped, report=report)), normalizer, pre)
    files = text_files(paths, skipped, report if report is not None else Skipped())
    total = sum(size for _, _, size in files)
    threads = pre.counts_compiled(total)  # the kernels let go of the GIL: threads share one copy of them
    parallel = total >= MIN_PARALLEL and (os.cpu_count() or 1) > 1 and (threads or can_fork())
    workers = worker_count(workers) if parallel else 1
    blocks = plan_blocks(files, normalizer, block or block_size(total, workers))
    count = partial(count_blocks, normalizer=normalizer, pre=pre, errors=errors, compiled=threads)
    if workers > 1:
        if threads:
            ChunkTally(pre.name).add("a " * FAST_FROM)  # loads the compiled code once, before the threads
        shares = split_evenly(blocks, workers, size=lambda b: b.stop - b.start)
        parts = (thread_map if threads else fork_map)(count, shares)
    else:
        parts = [count(blocks)]
    counter: Counter = parts[0][0] if parts else Counter()
    for part, _, _ in parts[1:]:  # in text order, so first appearances keep their order
        get = counter.get
        for chunk, n in part.items():
            counter[chunk] = get(chunk, 0) + n
    chunks = list(counter)
    counts = np.fromiter(counter.values(), dtype=np.int64, count=len(chunks))
    return ChunkCounts(chunks, counts, len(files), sum(p[1] for p in parts), sum(p[2] for p in parts))


def text_files(paths: Iterable[str | Path], skipped: list[str] | None, report: Skipped) -> list[tuple[int, str, int]]:
    """(doc, path, size) of every text file `iter_documents` would read, checked as it checks
    them (a regular file within the size limit, no NUL near the start) but without reading them:
    binary files inside folders are passed over when `skipped` is given, else an error."""
    out: list[tuple[int, str, int]] = []
    texts_in: dict[Path, int] = {}
    for path, folder in list_files(paths, report):
        size, nul, head = _sniff(path)
        binary = nul >= 0
        if binary:
            if folder is None or skipped is None:
                raise binary_file(path, head, nul)
            skipped.append(str(path))
            report.binary.append(str(path))
        else:
            out.append((len(out) + 1, str(path), size))
        if folder is not None:
            texts_in[folder] = texts_in.get(folder, 0) + (not binary)
    for folder, n in texts_in.items():
        if n == 0:
            raise CorpusError(f"{folder}: folder holds no text files (all are binary)")
    return out


def _sniff(path: Path, limit: int = MAX_CORPUS_FILE_BYTES) -> tuple[int, int, bytes]:
    """The size of a regular file of at most `limit` bytes, where its first NUL byte sits
    within SNIFF bytes (-1: none) and those bytes, checked as `read_regular` checks a file."""
    with opened_regular(path, limit, "corpus file") as (fd, size):
        head = os.read(fd, SNIFF)
    return size, head.find(b"\x00"), head
