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
- it is written atomically (`atomic.write_atomic`), and a cache that cannot be written (a
  read-only home) is skipped silently: the load itself has succeeded.
"""

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import TokWorkbenchError
from .atomic import write_atomic

MAGIC = b"tokworkbench-derived-merges 1\n"
_MAX_HEADER = 4096
_MAX_RANK = 1 << 31


@dataclass(frozen=True)
class DerivedMerges:
    """What `tiktoken.merges_from_ranks` recovers from a ranks file, and the longest token
    (so a lower --max-token-bytes still refuses the file as a fresh read would)."""

    merges: list[tuple[int, int]]  # inside ids: byte b is b, merge k is 256 + k
    outside: list[int]  # the rank of each inside id
    longest: int  # bytes of the longest token


def cache_dir() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "tokworkbench" / "derived"


def cache_path(digest: str) -> Path:
    return cache_dir() / f"merges-{digest}.bin"


def _payload(left: np.ndarray, right: np.ndarray, outside: np.ndarray) -> bytes:
    return left.astype("<i4").tobytes() + right.astype("<i4").tobytes() + outside.astype("<i8").tobytes()


def store(digest: str, derived: DerivedMerges) -> bool:
    """Keep `derived` for the ranks whose SHA-256 is `digest`; False if it could not be written."""
    pairs = np.array(derived.merges, dtype=np.int64).reshape(-1, 2)
    payload = _payload(pairs[:, 0], pairs[:, 1], np.array(derived.outside, dtype=np.int64))
    header = {"ranks_sha256": digest, "merges": len(derived.merges), "longest": derived.longest,
              "payload_sha256": hashlib.sha256(payload).hexdigest()}
    try:
        cache_path(digest).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache_path(digest), MAGIC + json.dumps(header).encode("ascii") + b"\n" + payload)
    except (OSError, TokWorkbenchError):
        return False
    return True


def load(digest: str) -> DerivedMerges | None:
    """The merges kept for `digest`, or None when there are none or they do not check out."""
    try:
        with open(cache_path(digest), "rb") as f:
            data = f.read()
    except OSError:
        return None
    return parse(data, digest)


def parse(data: bytes, digest: str) -> DerivedMerges | None:
    if not data.startswith(MAGIC):
        return None
    end = data.find(b"\n", len(MAGIC), len(MAGIC) + _MAX_HEADER)
    if end < 0:
        return None
    try:
        header = json.loads(data[len(MAGIC):end])
        n, longest = int(header["merges"]), int(header["longest"])
        if header["ranks_sha256"] != digest or n < 0 or longest < 1:
            return None
        payload_digest = header["payload_sha256"]
    except (ValueError, KeyError, TypeError, OverflowError, RecursionError):  # 1e999; [[[[...
        return None
    payload = data[end + 1:]
    if len(payload) != 8 * n + 8 * (256 + n) or hashlib.sha256(payload).hexdigest() != payload_digest:
        return None
    left = np.frombuffer(payload, dtype="<i4", count=n)
    right = np.frombuffer(payload, dtype="<i4", count=n, offset=4 * n)
    outside = np.frombuffer(payload, dtype="<i8", count=256 + n, offset=8 * n)
    made = 256 + np.arange(n)  # merge k joins tokens made before it
    if n and ((left < 0).any() or (right < 0).any() or (left >= made).any() or (right >= made).any()):
        return None
    if (outside < 0).any() or (outside > _MAX_RANK).any() or len(np.unique(outside)) != len(outside):
        return None  # ranks are distinct (sorted: a bincount would be as long as the largest rank)
    return DerivedMerges(list(zip(left.tolist(), right.tolist())), outside.tolist(), longest)
