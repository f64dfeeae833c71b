"""What a ranks file's merges are, kept between runs: recovering cl100k's 100,000 merges from
its ranks takes about half a second (o200k's, a second), every time `-m cl100k_base` starts.

The cache holds one file per ranks file, named by the SHA-256 of the ranks' bytes, in
`$XDG_CACHE_HOME/tokworkbench/derived/` (by default `~/.cache/tokworkbench/derived/`). It is a
speed-up only and never changes a result:
- it is looked up by the digest of the very bytes being loaded, and records that digest again
  inside, so a renamed or copied file is not mistaken for another's;
- its payload carries its own SHA-256, its counts, and merges that only join earlier tokens;
  anything that does not check out (a torn write, another version, a flipped bit) is ignored
  and the merges are recovered afresh, and the file rewritten;
- it is checked against the ranks it claims to come from before it is used (`matches`): the
  ids must be the ranks file's own, and each merge must join two earlier tokens whose bytes make
  the merged token's. That costs a parse of the ranks (a fifth of recovering the merges) and is
  what makes a forged file harmless to the ids: a file that swaps two tokens' ids, or joins the
  wrong bytes, fails it and is rebuilt. What it does not re-derive is which of two valid splits
  tiktoken's rule picks for a token (that is the recovery itself); only someone who can write
  our own private folder could choose the other, and they can already do anything as us;
- the folder is created 0700, each of `tokworkbench/derived` must be a real folder (no link
  followed) owned by us and writable by no one else, or the cache is skipped; files in it are
  opened with O_NOFOLLOW, must be ours and regular, and are written 0600 through a descriptor
  of the folder (`atomic.write_in_folder`), so a planted link is replaced, never written through;
- a cache that cannot be written (a read-only home, a shared folder) is skipped silently: the
  load itself has succeeded. So is one on a system without the calls above (no `O_DIRECTORY` or
  `dir_fd`, as on Windows): nothing is kept there, rather than something kept unsafely;
- the folder stays bounded (`_prune`, after each write): every file read is marked used, the
  least recently used go once the folder holds more than MAX_KEPT_BYTES, and of the versions of
  one thing (the class tables of other `regex` releases or other code) only SIBLINGS_KEPT stay.
"""

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np

from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.files.atomic import write_in_folder

MAGIC = b"tokworkbench-derived-merges 1\n"
MAX_HEADER = 4096  # bytes of a kept file's header line, at most
_MAX_RANK = 1 << 31
MAX_KEPT_BYTES = 256 << 20  # the folder's kept files together, at most (cl100k's is 2 MB)
SIBLINGS_KEPT = 3  # versions of one thing kept: two installs used in turn do not rebuild each time
_KEPT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\.bin")  # what `keep` writes; its temps start with "."


@dataclass(frozen=True)
class DerivedMerges:
    """What `tiktoken.merges_from_ranks` recovers from a ranks file, and the longest token
    (so a lower --max-token-bytes still refuses the file as a fresh read would)."""

    merges: list[tuple[int, int]]  # inside ids: byte b is b, merge k is 256 + k, then the whole-only
    outside: list[int]  # the rank of each inside id
    longest: int  # bytes of the longest token
    whole: tuple[bytes, ...] = ()  # the tokens no merge makes (their ranks end `outside`), rank order


def cache_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "tokworkbench" / "derived"


def cache_path(digest: str) -> Path:
    return cache_dir() / _name(digest)


def _name(digest: str) -> str:
    return f"merges-{digest}.bin"


def _ours(st: os.stat_result) -> bool:
    """Owned by this user and writable by no one else: nothing another user can change."""
    return st.st_uid == os.geteuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def open_folder(create: bool) -> int | None:
    """A descriptor of the cache folder (made 0700 where missing, when `create`), or None: skip
    the cache, since a folder on the way is a link, another user's, writable by others, or absent.
    Each step opens the next folder relative to the last with O_NOFOLLOW, so the folder used is
    the one checked, even if a name on the way is swapped meanwhile."""
    if not _safe_calls():
        return None
    root = cache_dir().parent.parent
    try:
        if create:
            os.makedirs(root, mode=0o700, exist_ok=True)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    for name in cache_dir().relative_to(root).parts:
        try:
            if create:
                try:
                    os.mkdir(name, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            sub = None
        os.close(fd)
        if sub is None:
            return None
        fd = sub
        if not _ours(os.fstat(fd)):
            os.close(fd)
            return None
    return fd


def _safe_calls() -> bool:
    """Whether this system has what `open_folder`, `keep` and `read_kept` rely on."""
    return (all(hasattr(os, flag) for flag in ("O_DIRECTORY", "O_NOFOLLOW"))
            and {os.open, os.mkdir, os.unlink, os.rename, os.stat} <= os.supports_dir_fd  # rename: os.replace's
            and os.scandir in os.supports_fd)


def _payload(left: np.ndarray, right: np.ndarray, outside: np.ndarray) -> bytes:
    return left.astype("<i4").tobytes() + right.astype("<i4").tobytes() + outside.astype("<i8").tobytes()


def store(digest: str, derived: DerivedMerges) -> bool:
    """Keep `derived` for the ranks whose SHA-256 is `digest`; False if it could not be written."""
    pairs = np.array(derived.merges, dtype=np.int64).reshape(-1, 2)
    payload = _payload(pairs[:, 0], pairs[:, 1], np.array(derived.outside, dtype=np.int64))
    payload += b"".join(len(t).to_bytes(4, "little") + t for t in derived.whole)
    header = {"ranks_sha256": digest, "merges": len(derived.merges), "longest": derived.longest,
              "whole": len(derived.whole)}
    return keep(_name(digest), framed(MAGIC, header, payload))


def framed(magic: bytes, header: dict, payload: bytes) -> bytes:
    """A kept file: `magic`, then `header` as one line of JSON with the payload's SHA-256
    added, then the payload."""
    header = {**header, "payload_sha256": hashlib.sha256(payload).hexdigest()}
    return magic + json.dumps(header).encode("ascii") + b"\n" + payload


def unframed(data: bytes, magic: bytes) -> tuple[dict, bytes] | None:
    """`framed`'s header and payload, or None: another magic, no header line within 4 KB, a
    header that is not a JSON object (or nests without end), or a payload whose SHA-256 is not
    the one the header records."""
    if not data.startswith(magic):
        return None
    end = data.find(b"\n", len(magic), len(magic) + MAX_HEADER)
    if end < 0:
        return None
    try:
        header = json.loads(data[len(magic) : end])
    except (ValueError, RecursionError):  # [[[[...
        return None
    payload = data[end + 1 :]
    if not isinstance(header, dict) or hashlib.sha256(payload).hexdigest() != header.get("payload_sha256"):
        return None
    return header, payload


def keep(name: str, data: bytes, siblings: str | None = None) -> bool:
    """Write `data` as `name` in the cache folder (atomically, 0600); False if it could not be
    written. Other kept values (core/text/classcache.py) go through here and `read_kept` too.
    `siblings`: the start of the names of this thing's other versions, of which few stay."""
    if not _KEPT_NAME.fullmatch(name) or (siblings is not None and not name.startswith(siblings)):
        raise ValueError(f"not a kept file's name: {name!r}")
    folder = open_folder(create=True)
    if folder is None:
        return False
    try:
        os.fchmod(folder, 0o700)  # one made by an older version may be 0755
        write_in_folder(folder, name, data)
        _prune(folder, name, siblings)
    except (OSError, TokWorkbenchError):
        return False
    finally:
        os.close(folder)
    return True


def _prune(folder: int, written: str, siblings: str | None) -> None:
    """Bound the folder after writing `written`, which stays: of the files named `siblings`...,
    the SIBLINGS_KEPT used last stay; then the least recently used go while the kept files come
    to more than MAX_KEPT_BYTES. Only regular files of ours with a kept name are looked at (no
    link is followed or removed); one that cannot be removed is left."""
    kept = []  # (last used, name, size), the newest first
    with os.scandir(folder) as entries:
        for entry in entries:
            if not _KEPT_NAME.fullmatch(entry.name) or entry.name == written:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and _ours(st):
                kept.append((st.st_mtime_ns, entry.name, st.st_size))
    kept.sort(reverse=True)
    gone: set[str] = set()
    if siblings is not None:
        versions = [k for k in kept if k[1].startswith(siblings)]
        gone = {name for _, name, _ in versions[SIBLINGS_KEPT - 1 :]}
        kept = [k for k in kept if k[1] not in gone]
    total = os.stat(written, dir_fd=folder, follow_symlinks=False).st_size
    for _, name, size in kept:
        total += size
        if total > MAX_KEPT_BYTES:
            gone.add(name)
    for name in gone:
        try:
            os.unlink(name, dir_fd=folder)
        except OSError:
            pass


def read_kept(name: str, limit: int | None = None) -> bytes | None:
    """The bytes kept as `name`, or None: no such file, or not a regular file of ours (within
    `limit` bytes, when given)."""
    folder = open_folder(create=False)
    if folder is None:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)
    data = None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and _ours(st) and (limit is None or st.st_size <= limit):
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read()
            _mark_used(fd)
    except OSError:
        data = None
    finally:
        os.close(fd)
    return data


def _mark_used(fd: int) -> None:
    """Set a kept file's time to now: `_prune` removes the least recently used."""
    try:
        os.utime(fd)
    except OSError:  # a cache on a read-only disk is still read
        pass


def load(digest: str) -> DerivedMerges | None:
    """The merges kept for `digest`, or None when there are none or they do not check out (the
    caller still checks them against the ranks: `matches`)."""
    data = read_kept(_name(digest))
    return None if data is None else parse(data, digest)


def matches(kept: DerivedMerges, ranks: dict[bytes, int]) -> bool:
    """Whether `kept` is what `ranks` define: the same ids (each single byte's rank, then the
    merged tokens' ranks in rank order, then the whole-only tokens', in rank order, covering
    every longer token) and merges whose two parts' bytes make the merged token. A
    self-consistent file that swaps ids or joins other bytes fails here. In numpy over one
    buffer of every token's bytes: a few ms for cl100k, against ~0.7 s to recover its merges.
    (Which tokens are whole-only is not re-derived; a model with any encodes by the ranks
    themselves, so that choice cannot change its ids.)"""
    singles = [ranks.get(bytes([b])) for b in range(256)]
    n, w = len(kept.merges), len(kept.whole)
    if None in singles or len(ranks) != 256 + n + w or len(kept.outside) != 256 + n + w:
        return False
    if kept.outside[:256] != singles or any(ranks.get(t) != r for t, r in zip(kept.whole, kept.outside[256 + n:])):
        return False
    longer = [t for t in ranks if len(t) > 1]
    merged_set = set(kept.whole)
    longer = [t for t in longer if t not in merged_set]
    if len(longer) != n:
        return False
    rank = np.fromiter(map(ranks.__getitem__, longer), dtype=np.int64, count=len(longer))
    order = np.argsort(rank, kind="stable")
    if kept.outside[256:256 + n] != rank[order].tolist():
        return False
    tokens = [bytes([b]) for b in range(256)] + [longer[i] for i in order.tolist()] + list(kept.whole)
    size = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    start = np.concatenate(([0], np.cumsum(size)[:-1]))
    buf = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    pairs = np.fromiter(chain.from_iterable(kept.merges), dtype=np.int64, count=2 * n).reshape(-1, 2)
    a, b, c = pairs[:, 0], pairs[:, 1], 256 + np.arange(len(pairs))
    if not np.array_equal(size[a] + size[b], size[c]):
        return False
    # every byte of every merged token, beside the byte of its left or right part it should be
    n = size[c]
    at = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)  # offset inside the merged token
    left = np.repeat(size[a], n)
    part = np.where(at < left, np.repeat(start[a], n) + at, np.repeat(start[b], n) + at - left)
    return bool(np.array_equal(buf[np.repeat(start[c], n) + at], buf[part]))


def parse(data: bytes, digest: str) -> DerivedMerges | None:
    found = unframed(data, MAGIC)
    if found is None:
        return None
    header, payload = found
    try:
        n, longest, w = int(header["merges"]), int(header["longest"]), int(header.get("whole", 0))
        if header["ranks_sha256"] != digest or n < 0 or longest < 1 or w < 0:
            return None
    except (ValueError, KeyError, TypeError, OverflowError):  # 1e999
        return None
    whole_at = 8 * n + 8 * (256 + n + w)
    if len(payload) < whole_at:
        return None
    left = np.frombuffer(payload, dtype="<i4", count=n)
    right = np.frombuffer(payload, dtype="<i4", count=n, offset=4 * n)
    outside = np.frombuffer(payload, dtype="<i8", count=256 + n + w, offset=8 * n)
    whole = _whole_tokens(payload[whole_at:], w)
    if whole is None:
        return None
    # merge k joins tokens made before it, or (a ranks file with whole-only tokens) one of those
    made = 256 + np.arange(n) if not w else np.full(n, 256 + n + w)
    if n and ((left < 0).any() or (right < 0).any() or (left >= made).any() or (right >= made).any()):
        return None
    if (outside < 0).any() or (outside > _MAX_RANK).any() or len(np.unique(outside)) != len(outside):
        return None  # ranks are distinct (sorted: a bincount would be as long as the largest rank)
    return DerivedMerges(list(zip(left.tolist(), right.tolist())), outside.tolist(), longest, whole)


def _whole_tokens(data: bytes, count: int) -> tuple[bytes, ...] | None:
    """The whole-only tokens after the payload's arrays: each a <u4 length and its bytes."""
    out, at = [], 0
    for _ in range(count):
        if at + 4 > len(data):
            return None
        size = int.from_bytes(data[at : at + 4], "little")
        at += 4
        if at + size > len(data):
            return None
        out.append(data[at : at + size])
        at += size
    return tuple(out) if at == len(data) else None
