"""Pre-tokenize and count chunks on a Dask cluster: `tokworkbench count --engine dask`.

Each task counts one byte range of one shard (a file). Ranges are cut only where the local
parallel counter would cut the normalized text (`safe_cut`), judged on the raw bytes:
- before a space byte (0x20) that has a printable ASCII character (0x21-0x7E) on both sides;
- before a line break (CR or LF) whose preceding character, normalized on its own, ends in a
  letter or digit: this is what cuts text written without spaces (Chinese, Japanese).
ASCII bytes never occur inside a multi-byte UTF-8 sequence, and neither a printable ASCII
character nor a line break composes or decomposes under NFC or NFKC, so each range decodes and
normalizes on its own to exactly its part of the whole, and every preset pattern splits it into
exactly the chunks of the whole file (property-tested). A task finds both of its cuts itself:
it starts at the first cut at or after its nominal start and stops at the first cut at or after
its nominal end, so neighbouring tasks meet without talking. A range with no such place in it
(one long line without ASCII spaces) is not cut: one task then takes the rest of the file.

A custom pattern, or `none`, may match across any cut, so each shard is then one task.

Partial counts are merged pairwise in a tree of tasks on the workers, always a range with the
range right after it, so every chunk keeps its order of first appearance (shard, then offset)
and the `first` tie-break gives the merges a local run gives. Only the final counts travel to
the client. A worker that dies mid-task is replaced and its tasks run again elsewhere (the
scheduler's `allowed-failures`, 3 by default); a task's result does not depend on where it ran.
"""

import os
import re
import socket
import sys
from collections import Counter
from contextlib import redirect_stdout
from dataclasses import dataclass

import dask
import numpy as np
from dask import delayed
from distributed import Client
from distributed import progress as dask_progress
from distributed.client import FutureCancelledError
from distributed.scheduler import KilledWorker

from tokworkbench.core.errors import ClusterError, CorpusError, InvalidUtf8Error
from tokworkbench.core.text.blocks import cut_in_file  # the cut rule, shared with the local block reader
from tokworkbench.core.text.chunks import ChunkCounts
from tokworkbench.core.text.corpus import binary_file
from tokworkbench.core.text.corpus import os_reason as _os_reason
from tokworkbench.core.text.normalize import normalize
from tokworkbench.core.text.parallel import PIECE, cut_text
from tokworkbench.core.text.pretokenize import PreTokenizer
from tokworkbench.engines.remote import is_url, open_url

TASK_BYTES = 64 << 20  # nominal bytes per task; a task holds ~10x this at its peak (text + chunk lists)
CONNECT_TIMEOUT = 5.0  # seconds to reach the scheduler
_SNIFF = 8192  # bytes looked at for a NUL, as the local reader does


@dataclass(frozen=True)
class Shard:
    name: str  # as the user named it (for messages)
    path: str  # absolute, or a URL that fsspec reads (remote.py), for the workers
    size: int


def shards_of(files, report=None) -> list[Shard]:
    """Shards from `list_files`' answer, read on the client only to check each one: a named
    file must be readable text; a binary file found in a folder is passed over (noted in
    `report.binary`), as the local reader does."""
    out, texts_in = [], {}
    for path, folder in files:
        try:
            with _open(str(path)) as f:
                head = f.read(_SNIFF)
                size = f.seek(0, os.SEEK_END)
        except OSError as exc:
            raise CorpusError(f"cannot read {path}: {os_reason(exc)}") from None
        nul = head.find(b"\x00")
        if nul >= 0:
            if folder is None or report is None:
                raise binary_file(path, head, nul)
            report.binary.append(str(path))
        else:
            out.append(Shard(str(path), str(path) if is_url(str(path)) else os.path.abspath(path), size))
        if folder is not None:
            texts_in[folder] = texts_in.get(folder, 0) + (nul < 0)
    for folder, n in texts_in.items():
        if n == 0:
            raise CorpusError(f"{folder}: folder holds no text files (all are binary)")
    return out


def os_reason(exc: OSError) -> str:
    """fsspec raises FileNotFoundError with only the path in it."""
    if isinstance(exc, FileNotFoundError) and not exc.strerror:
        return "no such file"
    return _os_reason(exc)


def _open(path: str):
    """Local paths through the OS, URLs through fsspec (on the client and on the workers)."""
    return open_url(path) if is_url(path) else open(path, "rb")


def count_range(shard: Shard, start: int, stop: int, normalizer: str, pre: PreTokenizer,
                errors: str = "strict", hook=None) -> tuple[Counter, int, int]:
    """Counts, chars and UTF-8 bytes (after normalizing) of the text between the cuts at or
    after `start` and `stop` in one shard. Runs on a worker."""
    if hook is not None:
        hook(shard, start)
    try:
        with _open(shard.path) as f:
            begin = cut_in_file(f, start, shard.size, normalizer)
            end = cut_in_file(f, stop, shard.size, normalizer) if stop < shard.size else shard.size
            if begin >= end:
                return Counter(), 0, 0
            f.seek(begin)
            data = f.read(end - begin)
    except OSError as exc:
        raise CorpusError(f"cannot read {shard.name}: {os_reason(exc)}") from None
    if len(data) != end - begin:
        raise CorpusError(f"cannot read {shard.name}: it changed size while it was counted")
    try:
        text = data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise InvalidUtf8Error(f"{shard.name}: not valid UTF-8 at byte offset {begin + exc.start} "
                               f"(byte 0x{bad}); convert the file to UTF-8") from None
    del data
    text = normalize(text, normalizer)
    counter: Counter = Counter()
    pieces = cut_text(text, max(1, len(text) // PIECE)) if pre.is_preset_pattern else [text]
    for piece in pieces:
        counter.update(pre.split(piece))
    return counter, len(text), len(text.encode("utf-8"))


def merge_counts(left: tuple[Counter, int, int], right: tuple[Counter, int, int]) -> tuple[Counter, int, int]:
    """`left`'s counts, then `right`'s (the text right after it): first appearances keep their order.
    The inputs are left untouched (a retried task may see them again)."""
    merged = Counter(left[0])
    get = merged.get
    for chunk, n in right[0].items():
        merged[chunk] = get(chunk, 0) + n
    return merged, left[1] + right[1], left[2] + right[2]


def plan(shards: list[Shard], pre: PreTokenizer, task_bytes: int = TASK_BYTES) -> list[tuple[Shard, int, int]]:
    """The tasks, in text order: (shard, nominal start, nominal stop). Only a preset pattern
    lets a shard be cut; otherwise each shard is one task."""
    tasks = []
    for shard in shards:
        if not pre.is_preset_pattern or shard.size <= task_bytes:
            tasks.append((shard, 0, shard.size))
            continue
        bounds = list(range(0, shard.size, task_bytes)) + [shard.size]
        tasks += [(shard, a, b) for a, b in zip(bounds, bounds[1:])]
    return tasks


def tree(parts: list, combine) -> object:
    """Pairwise reduction of `parts` in order, as delayed tasks: log2(n) levels, each merging a
    part with its right neighbour, so the client only ever receives the final result."""
    level = parts
    while len(level) > 1:
        nxt = [delayed(combine, pure=True)(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


_ADDRESS = re.compile(r"^(?:(?P<scheme>[a-z]+)://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[^\s/:\[\]]+):(?P<port>[0-9]{1,5})$")


def check_address(address: str) -> None:
    """Refuse, before any Client exists, an address that is not [scheme://]host:port: a
    Client made from `tcp://` or `:::` failed only after its own close timed out (10 s), with
    a traceback."""
    m = _ADDRESS.match(address)
    if m is None or not 0 < int(m["port"]) < 65536 or (m["scheme"] or "tcp") not in ("tcp", "tls", "ws", "wss", "ucx"):
        raise ClusterError(f"{address!r} is not a Dask scheduler address; write it as tcp://HOST:PORT "
                           "(e.g. tcp://10.0.0.5:8786)")


def _check_answers(address: str, timeout: float) -> None:
    """A plain TCP scheduler writes its handshake as soon as it accepts; one that accepts and
    stays silent would hold Client (and `count`) forever, past every timeout it has."""
    m = _ADDRESS.match(address)
    if (m["scheme"] or "tcp") != "tcp":
        return
    with socket.create_connection((m["host"].strip("[]"), int(m["port"])), timeout=timeout) as probe:
        try:
            if not probe.recv(1):
                raise OSError("it closed the connection without a word")
        except socket.timeout:
            raise TimeoutError(f"it accepts connections but sent no handshake in {timeout:g} s") from None


def connect(address: str, timeout: float = CONNECT_TIMEOUT) -> Client:
    check_address(address)
    try:
        # the connect timeout bounds the handshake too: a port that accepts and never answers
        # held `count` past 120 s with only Client's own timeout
        with dask.config.set({"distributed.comm.timeouts.connect": f"{timeout}s"}):
            _check_answers(address, timeout)
            return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ClusterError(f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({reason})") from None


def count_dask(shards: list[Shard], normalizer: str, pre: PreTokenizer, address: str | Client,
               errors: str = "strict", task_bytes: int = TASK_BYTES, show_progress: bool | None = None,
               hook=None) -> ChunkCounts:
    """Chunk counts of the shards (each one document), counted on the cluster at `address` (or
    through a `Client`); equal to `count_chunks` on the same files, first-appearance order
    included. `hook(shard, start)` runs at the start of every task (tests use it to kill a worker)."""
    if not shards:
        raise CorpusError("no corpus given: name at least one file or folder")
    parts = [delayed(count_range, pure=True)(shard, a, b, normalizer, pre, errors, hook)
             for shard, a, b in plan(shards, pre, task_bytes)]
    final = tree(parts, merge_counts)
    own = not isinstance(address, Client)
    client = connect(address) if own else address
    try:
        future = client.compute(final)
        if show_progress if show_progress is not None else sys.stderr.isatty():
            with redirect_stdout(sys.stderr):  # distributed's own bar, on stderr: stdout carries the result
                dask_progress(future, scheduler=client.scheduler.address)  # our client is not the default
        try:
            counter, chars, nbytes = future.result()
        except KilledWorker as exc:
            raise ClusterError(f"a counting task's worker died too often ({exc}); "
                               "see the workers' logs (out of memory?)") from None
        except FutureCancelledError:
            raise ClusterError("the cluster cancelled the count (did the scheduler stop?)") from None
    finally:
        if own:
            client.close()
    chunks = list(counter)
    counts = np.fromiter(counter.values(), dtype=np.int64, count=len(chunks))
    return ChunkCounts(chunks, counts, len(shards), chars, nbytes)
