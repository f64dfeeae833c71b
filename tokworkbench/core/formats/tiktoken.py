"""tiktoken ranks: one `BASE64 RANK` line per token, plus our companion JSON for the pattern and
the special tokens (tiktoken keeps those in code, not in the ranks file).

tiktoken encodes a chunk by first looking it up whole in the ranks, and otherwise joining, again
and again, the adjacent pair whose bytes have the lowest rank. A ranks file therefore defines its
merges: each token is the join of the two lower-ranked parts that this rule reaches, and that is
how a model is recovered from it. A token the rule cannot build from its bytes (Llama 3 has 588,
e.g. ' việc') is still reached as a whole chunk: it has no merge parents, and is kept as a
whole-only token (`Tokenizer.whole_tokens`); such a model encodes by tiktoken's rule itself
(join "ranks", whole-chunk lookup first), since its merges alone would not give tiktoken's ids.

The pair is two files, and no file system replaces two files at once. So the companion records
the SHA-256 of the ranks file it belongs to, and loading checks it: a companion beside ranks of
another export (one killed between its two writes, or files copied from two exports) is an
error naming both files. The export writes both files in full before it replaces either, so a
failed write (a full disk) leaves the old pair as it was, and a failed rename puts the old
companion back; then it renames the companion first: if it dies before the ranks are replaced,
the new companion's hash does not match the old ranks, and the mix is caught. A
companion written before the hash existed (no `ranks_sha256`) is read as before: nothing can
tell whether it belongs, and refusing every older export would break working pairs.
"""

import base64
import binascii
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from tokworkbench.core.bpe.encode import lowest_rank_parts as tiktoken_parts
from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.errors import ExportError, ForeignModelError, ModelFileError, NeedsPatternError
from tokworkbench.core.files import derivedcache
from tokworkbench.core.files.atomic import write_atomic_all
from tokworkbench.core.files.limits import (
    MAX_TOKEN_BYTES,
    check_token_length,
    describe_json,
    is_count,
    is_text,
    parse_json,
    read_model_file,
    whole_number,
)
from tokworkbench.core.formats.known_ranks import known_ranks
from tokworkbench.core.models.idmap import IdMap
from tokworkbench.core.models.roles import NO_ROLES, Roles
from tokworkbench.core.text.pretokenize import PreTokenizer, from_pattern, parse_split

COMPANION_FORMAT = "tokworkbench-tiktoken"
MAX_RANK = (1 << 32) - 1  # tiktoken keeps ranks (and special token ids) as u32
_RANK_DIGITS = len(str(MAX_RANK))
NOT_A_MODEL = ("not a model file this tool reads (tokworkbench JSON, HF tokenizer.json, "
               ".tiktoken ranks, minbpe .model)")


def companion_path(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def ranks_digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def parse_ranks(raw: bytes, max_token_bytes: int = MAX_TOKEN_BYTES) -> dict[bytes, int]:
    """The tokens of a ranks file and their ranks. Ranks may come in any order and leave gaps
    (tiktoken accepts both); a rank or a token given twice is an error naming both lines. Each
    token is read as tiktoken reads it, with `base64.b64decode`'s lenient rule: characters
    outside the alphabet are skipped, and a lone '=' is the empty token (Whisper has one)."""
    fast = _parse_clean(raw, max_token_bytes)
    if fast is not None:
        return fast
    if not raw.isascii():
        raise ForeignModelError(NOT_A_MODEL)
    ranks: dict[bytes, int] = {}
    line_of: dict[int, int] = {}  # rank -> line
    b64decode = base64.b64decode
    for n, line in enumerate(raw.splitlines(), 1):  # lines and fields split as tiktoken splits bytes
        fields = [f.decode("ascii") for f in line.split()]
        if not fields:
            continue
        try:
            if len(fields) != 2:
                raise ForeignModelError(f"line {n} is not 'BASE64 RANK'")
            b64, rank_text = fields
            rank_text = _rank_digits(rank_text)
            if rank_text is None:
                raise ForeignModelError(f"line {n}: the rank {fields[1][:20]!r} is not a number")
            try:
                data = b64decode(b64)
            except (ValueError, binascii.Error):
                raise ForeignModelError(f"line {n}: {b64[:20]!r} is not base64") from None
        except ForeignModelError as exc:
            if ranks:
                raise
            raise ForeignModelError(f"{exc}; {NOT_A_MODEL}") from None
        rank = whole_number(rank_text, MAX_RANK, f"line {n}: the rank", ForeignModelError)
        if len(data) > max_token_bytes:
            check_token_length(rank, len(data), max_token_bytes)
        if rank in line_of:
            raise ForeignModelError(f"line {n}: rank {rank} is given twice (also on line {line_of[rank]})")
        if data in ranks:
            raise ForeignModelError(f"line {n}: the token {data!r} is given twice "
                                    f"(also on line {line_of[ranks[data]]}, rank {ranks[data]})")
        ranks[data] = rank
        line_of[rank] = n
    return ranks


def _rank_digits(text: str) -> str | None:
    """The digits of a rank as Python's `int` reads it (tiktoken calls `int(rank)`): a '+' and
    underscores between digits are allowed; a negative rank tiktoken cannot hold (u32) either."""
    text = text.removeprefix("+")
    if not text or text[0] == "_" or text[-1] == "_" or "__" in text:
        return None
    digits = text.replace("_", "")
    return digits if digits.isascii() and digits.isdigit() else None


_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _parse_clean(raw: bytes, max_token_bytes: int) -> dict[bytes, int] | None:
    """The ranks of a well-formed file ('BASE64 RANK' lines, one space, line ends \\n), read in
    bulk; None when anything is off (a bad line, a repeat, a long token), and then the
    line-by-line reading names the line."""
    if raw.translate(None, _B64 + b"= \n"):
        return None  # a byte no clean file holds (\r, a tab, not ASCII, …)
    if not raw.endswith(b"\n"):
        raw += b"\n"
    codes = np.frombuffer(raw, dtype=np.uint8)
    seps = np.flatnonzero((codes == 32) | (codes == 10))
    kinds = codes[seps]
    # fields alternate token, space, rank, line end; none is empty
    if (len(seps) % 2 or not len(seps) or seps[0] == 0 or (np.diff(seps) == 1).any()
            or (kinds[0::2] != 32).any() or (kinds[1::2] != 10).any()):
        return None
    fields = raw.split()
    tokens_b64, numbers_text = fields[0::2], fields[1::2]
    if not all(map(bytes.isdigit, numbers_text)) or max(map(len, numbers_text)) > _RANK_DIGITS:
        return None
    if any(n % 4 or not n for n in map(len, tokens_b64)):
        return None  # not base64: the careful reading says which line
    if b"=" in (b"|".join(tokens_b64) + b"|").replace(b"==|", b"|").replace(b"=|", b"|"):
        return None  # padding inside a token
    try:
        tokens = list(map(binascii.a2b_base64, tokens_b64))
    except binascii.Error:
        return None
    numbers = list(map(int, numbers_text))
    if max(numbers) > MAX_RANK:
        return None
    ranks = dict(zip(tokens, numbers))
    if len(ranks) != len(tokens) or len(set(numbers)) != len(numbers):
        return None
    if len(max(tokens, key=len)) > max_token_bytes:
        return None
    return ranks


def merges_from_ranks(ranks: dict[bytes, int], what: str) -> tuple[list[tuple[int, int]], list[int]]:
    """`recover_merges` for a file every token of which has merge parents (what our own exports
    and the presets hold): a whole-only token is an error naming it."""
    merges, outside, whole = recover_merges(ranks, what)
    if whole:
        data = next(t for t, r in ranks.items() if r == outside[256 + len(merges)])
        parts = tiktoken_parts(_Below(ranks, ranks[data]), data)
        shown = " + ".join(repr(p) for p in parts)
        raise ForeignModelError(f"{what}: rank {ranks[data]} ({data!r}) is not two lower-ranked tokens joined "
                                f"(the lowest-rank rule stops at {shown[:120]})")
    return merges, outside


def recover_merges(ranks: dict[bytes, int], what: str) -> tuple[list[tuple[int, int]], list[int], list[bytes]]:
    """Recover merges from a ranks table, as tiktoken's `_educational.recover_merges` does: a
    token's parents are the two parts tiktoken's lowest-rank rule makes of its bytes with only
    the lower ranks. Where that ends in three or more parts, the rule over every other rank may
    still end in two, one ranked after the token (Llama 3 has 90 such: a longer chunk reaches
    them); where that fails too the token is whole-only (Llama 3's 588), reached only as a whole
    chunk. Returns the merges (inside ids: byte b is b, merge k is 256+k, merges in rank order,
    a part possibly made later), the rank of each inside id (the outside ids: the bytes, the
    merged tokens, then the whole-only ones), and the whole-only tokens in rank order (the
    empty token among them).

    The rule runs on every token at once in numpy (`_Recovery`); a token it cannot take (longer
    than `_BATCH_LONGEST`), or a table where two tokens' hashes collide, goes one token at a time."""
    singles = [ranks.get(bytes([b])) for b in range(256)]
    missing = [b for b, r in enumerate(singles) if r is None]
    if missing:
        raise ForeignModelError(
            f"{what}: the file has {len(ranks)} rank{'' if len(ranks) == 1 else 's'} and lacks "
            f"{len(missing)} of the 256 single bytes (e.g. {bytes([missing[0]])!r}); "
            "a byte-level ranks file holds every single byte, at any ranks")
    every = list(ranks)
    every_rank = np.fromiter(ranks.values(), dtype=np.int64, count=len(every))
    chosen = np.flatnonzero(np.fromiter(map(len, every), dtype=np.int64, count=len(every)) > 1)
    chosen = chosen[np.argsort(every_rank[chosen], kind="stable")]
    tokens = [every[i] for i in chosen.tolist()]
    merged_ranks = every_rank[chosen].tolist()
    outside = singles + merged_ranks
    n = len(tokens)
    left = np.full(n, -1, dtype=np.int64)  # the ranks of each token's two parts; -1: not found yet
    right = np.full(n, -1, dtype=np.int64)
    recovery = _Recovery.of(ranks) if n else None
    if recovery is not None:
        lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=n)
        cut = np.array(merged_ranks, dtype=np.int64)
        lower = 1
        for width in _WIDTHS:
            bucket = np.flatnonzero((lengths > lower) & (lengths <= width))
            lower = width
            step = max(1, _BATCH_CELLS // width)  # bounded memory, however many long tokens
            for at in range(0, len(bucket), step):
                rows = bucket[at : at + step]
                ok, a, b = recovery.splits([tokens[i] for i in rows.tolist()], cut[rows], width)
                left[rows[ok]], right[rows[ok]] = a[ok], b[ok]
    whole_rows = []
    for i in np.flatnonzero(left < 0).tolist():
        r, data = merged_ranks[i], tokens[i]
        parts = tiktoken_parts(_Below(ranks, r), data)
        if len(parts) != 2:  # the rule may still reach it through a part ranked after it
            parts = tiktoken_parts(_AllBut(ranks, data), data)
            if len(parts) != 2:
                whole_rows.append(i)
                continue
        left[i], right[i] = ranks[parts[0]], ranks[parts[1]]
    empty = ranks.get(b"")
    whole: list[bytes] = []
    if whole_rows or empty is not None:
        keep = np.ones(n, dtype=bool)
        keep[whole_rows] = False
        pairs = sorted([(merged_ranks[i], tokens[i]) for i in whole_rows] + ([(empty, b"")] if empty is not None else []))
        whole = [t for _, t in pairs]
        left, right = left[keep], right[keep]
        outside = singles + [r for r, k in zip(merged_ranks, keep.tolist()) if k] + [r for r, _ in pairs]
    by_rank = np.array(outside, dtype=np.int64)
    order = np.argsort(by_rank)
    sorted_ranks = by_rank[order]
    inside_left = order[np.searchsorted(sorted_ranks, left)].tolist()
    inside_right = order[np.searchsorted(sorted_ranks, right)].tolist()
    return list(zip(inside_left, inside_right)), outside, whole


class _AllBut:
    """Every rank but that of `data`: what tiktoken's rule joins before its last join makes
    `data` (the two parts it stops at are the token's parents, whatever their ranks)."""

    def __init__(self, ranks: dict[bytes, int], data: bytes):
        self.ranks, self.data = ranks, data

    def get(self, data: bytes, default=None):
        return default if data == self.data else self.ranks.get(data, default)


class _Below:
    """The ranks below `cut`: what tiktoken's rule may join on the way to the token of rank `cut`."""

    def __init__(self, ranks: dict[bytes, int], cut: int):
        self.ranks, self.cut = ranks, cut

    def get(self, data: bytes, default=None):
        r = self.ranks.get(data)
        return r if r is not None and r < self.cut else default


_BATCH_LONGEST = 1024
_BATCH_CELLS = 1 << 22  # positions (tokens x width) taken at once: ~200 MB of arrays at most
_WIDTHS = (2, 6, 10, 16, 64, 256, _BATCH_LONGEST)  # fewer columns, less work per round
_NONE = np.int64(1 << 62)
_HASH_BASE = np.uint64(0x100000001B3)
_LEN_SHIFT = np.uint64(53)


def _flat(tokens: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All tokens' bytes end to end, each token's length, and the row each byte belongs to."""
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    flat = np.frombuffer(b"".join(tokens), dtype=np.uint8)
    rows = np.repeat(np.arange(len(tokens)), lengths)
    return flat, lengths, rows


def _key(h: np.ndarray, length: np.ndarray) -> np.ndarray:
    return h ^ (length.astype(np.uint64) << _LEN_SHIFT)


class _Recovery:
    """tiktoken's rule on many tokens at once. A part of a token is known by a 64-bit polynomial
    hash of its bytes and its length, looked up in the sorted keys of every token of the table
    (used only when no two tokens share a key). Bytes that are no token could still meet a
    token's key by chance: with about 3M lookups into 200k keys of 64 bits, about once in
    3 * 10^7 such files."""

    def __init__(self, keys: np.ndarray, key_ranks: np.ndarray, ranks: dict[bytes, int]):
        self.keys, self.key_ranks, self.ranks = keys, key_ranks, ranks

    @classmethod
    def of(cls, ranks: dict[bytes, int]) -> "_Recovery | None":
        tokens = [t for t in ranks if t]  # the empty token is no part of any other
        flat, lengths, rows = _flat(tokens)
        longest = int(lengths.max())
        pow_ = _powers(longest)
        from_end = np.repeat(np.cumsum(lengths), lengths) - np.arange(len(flat)) - 1
        with np.errstate(over="ignore"):
            terms = (flat.astype(np.uint64) + np.uint64(1)) * pow_[from_end]
        starts = np.cumsum(lengths) - lengths
        h = np.add.reduceat(terms, starts)
        keys = _key(h, lengths)
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        if len(keys) > 1 and (keys[1:] == keys[:-1]).any():
            return None
        key_ranks = np.fromiter(map(ranks.__getitem__, tokens), dtype=np.int64, count=len(tokens))[order]
        return cls(keys, key_ranks, ranks)

    def _table(self):
        """An open-addressing table (linear probing, at most a quarter full) of the keys: one or
        two memory reads a lookup, where a search of the sorted keys takes eighteen."""
        table = self.__dict__.get("table")
        if table is None:
            n = len(self.keys)
            bits = max(12, (4 * n - 1).bit_length())
            mask = (1 << bits) - 1
            t_keys = np.zeros(mask + 1, dtype=np.uint64)
            t_ranks = np.full(mask + 1, -1, dtype=np.int64)
            slot = _slot(self.keys, bits)
            pending = np.arange(n)
            while len(pending):
                s = slot[pending]
                free = t_ranks[s] < 0
                cand, cs = pending[free], s[free]
                _, first = np.unique(cs, return_index=True)
                win = cand[first]
                t_keys[slot[win]] = self.keys[win]
                t_ranks[slot[win]] = self.key_ranks[win]
                placed = np.zeros(n, dtype=bool)
                placed[win] = True
                pending = pending[~placed[pending]]
                slot[pending] = (slot[pending] + 1) & mask
            table = self.__dict__["table"] = (bits, mask, t_keys, t_ranks)
        return table

    def _rank(self, h: np.ndarray, length: np.ndarray, cut: np.ndarray) -> np.ndarray:
        bits, mask, t_keys, t_ranks = self._table()
        k = _key(h, length)
        out = np.full(len(k), _NONE, dtype=np.int64)
        slot = _slot(k, bits)
        pending = np.arange(len(k))
        while len(pending):
            s = slot[pending]
            tr = t_ranks[s]
            used = tr >= 0
            hit = used & (t_keys[s] == k[pending])
            out[pending[hit]] = tr[hit]
            go = used & ~hit
            pending = pending[go]
            slot[pending] = (s[go] + 1) & mask
        return np.where(out < cut, out, _NONE)

    def splits(self, tokens: list[bytes], cutoffs: np.ndarray, width: int):
        """For tokens of at most `width` bytes, each with the ranks below its own (`cutoffs`):
        where the rule ends in two parts (a mask), the ranks of the two parts."""
        n = len(tokens)
        flat, lengths, row_of = _flat(tokens)
        col = np.arange(len(flat)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        # parts, in flat arrays (row * width + position): the hash and length of the part that
        # starts at a position, the next and previous part, the rank of the pair it starts
        hp = np.zeros(n * width, dtype=np.uint64)
        hp[row_of * width + col] = flat.astype(np.uint64) + np.uint64(1)
        lp = np.ones(n * width, dtype=np.int64)
        pos = np.tile(np.arange(width), n)
        nxt, prv = pos + 1, pos - 1
        pair = np.full(n * width, _NONE, dtype=np.int64)
        pow_ = _powers(width)
        with np.errstate(over="ignore"):
            first = np.flatnonzero(col + 1 < np.repeat(lengths, lengths))
            at = row_of[first] * width + col[first]
            pair[at] = self._rank(hp[at] * _HASH_BASE + hp[at + 1], np.full(len(at), 2), cutoffs[row_of[first]])
            active = np.arange(n)
            grid = pair.reshape(n, width)
            while len(active):
                row = active * width
                fm = row + grid[active].argmin(axis=1)
                go = pair[fm] < _NONE
                active, row, fm = active[go], row[go], fm[go]
                if not len(active):
                    break
                m = fm - row
                fj = row + nxt[fm]
                lj = lp[fj]
                hp[fm] = hp[fm] * pow_[lj] + hp[fj]
                lp[fm] += lj
                pair[fj] = _NONE
                after = nxt[fj]
                nxt[fm] = after
                inside = after < lengths[active]
                fa = row[inside] + after[inside]
                prv[fa] = m[inside]
                pair[fm] = _NONE
                fm2 = fm[inside]
                if len(fm2):
                    pair[fm2] = self._rank(hp[fm2] * pow_[lp[fa]] + hp[fa], lp[fm2] + lp[fa], cutoffs[active[inside]])
                p = prv[fm]
                has = p >= 0
                fp, fm3 = row[has] + p[has], fm[has]
                if len(fp):
                    pair[fp] = self._rank(hp[fp] * pow_[lp[fm3]] + hp[fm3], lp[fp] + lp[fm3], cutoffs[active[has]])
        base = np.arange(n) * width
        k = lp[base]
        two = (k < lengths) & (k + lp[base + np.minimum(k, width - 1)] == lengths)
        never = np.full(n, _NONE)
        left = self._rank(hp[base], k, never)
        right = self._rank(hp[base + np.minimum(k, width - 1)], lengths - k, never)
        return two & (left < _NONE) & (right < _NONE), left, right


def _slot(keys: np.ndarray, bits: int) -> np.ndarray:
    """A key's home slot in a table of 2**bits: the top bits of a Fibonacci-hashed key."""
    with np.errstate(over="ignore"):
        return ((keys * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)).astype(np.int64)


def _powers(n: int) -> np.ndarray:
    """_HASH_BASE ** k for k in 0..n, wrapping at 2**64."""
    out = np.ones(n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for k in range(1, n + 1):
            out[k] = out[k - 1] * _HASH_BASE
    return out


# -- the companion -----------------------------------------------------------------------------
def read_companion(path: Path, raw: bytes) -> dict | None:
    """The checked companion of the ranks file `path` (whose bytes are `raw`), or None if there
    is none. A companion that is not ours, or that belongs to other ranks, is an error."""
    side = companion_path(path)
    if not os.path.lexists(side):
        return None
    try:
        meta = parse_json(read_model_file(side))
    except ModelFileError as exc:
        raise ForeignModelError(f"the companion {side}: {exc}") from None
    return check_companion(meta, raw, path, side)


def check_companion(meta, raw: bytes, path: Path, side: Path) -> dict:
    if not isinstance(meta, dict):
        raise ForeignModelError(f"the companion {side} holds {describe_json(meta)}; it must be a JSON object "
                                "with pat_str and special_tokens")
    if meta.get("format", COMPANION_FORMAT) != COMPANION_FORMAT:
        raise ForeignModelError(f"the companion {side} is not a tokworkbench tiktoken companion "
                                f"(format {str(meta.get('format'))[:40]!r})")
    pattern = meta.get("pat_str")
    if pattern is not None and not is_text(pattern):
        raise ForeignModelError(f"the companion {side}: 'pat_str' must be a string, not {describe_json(pattern)}")
    specials = meta.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(is_text(s) and s and is_count(i) and i <= MAX_RANK
                                                 for s, i in specials.items()):
        raise ForeignModelError(f"the companion {side}: 'special_tokens' must map strings to ids, "
                                f"not {describe_json(specials)}")
    digest = meta.get("ranks_sha256")
    if digest is not None and digest != ranks_digest(raw):
        raise ForeignModelError(
            f"the companion {side} does not belong to {path}: it records the SHA-256 of other ranks "
            "(an export interrupted between the two files, or files of two exports); export again")
    return {"pat_str": pattern, "special_tokens": specials, "explicit_n_vocab": meta.get("explicit_n_vocab")}


# -- import ------------------------------------------------------------------------------------
def from_tiktoken(raw: bytes, split: "str | PreTokenizer | None", meta: dict | None,
                  max_token_bytes: int = MAX_TOKEN_BYTES, side_name: str = "OUT.json",
                  specials: dict[str, int] | None = None) -> Tokenizer:
    """A model from ranks and a checked companion (`read_companion`), or ranks and `split`: a
    preset name, `regex:PATTERN`, or a PreTokenizer. `split` wins over the companion's pattern,
    and `specials` (name -> id) over the companion's special tokens. The ranks stay the ids."""
    digest = ranks_digest(raw)
    ranks = parse_ranks(raw, max_token_bytes)
    kept = _kept(digest if len(raw) >= CACHE_FROM_BYTES else None, ranks)
    known = known_ranks(digest) if meta is None else None
    if split is not None:
        pre = split if isinstance(split, PreTokenizer) else parse_split(split)
    elif meta is not None:
        pre = from_pattern(meta["pat_str"])
    elif known is not None:
        pre = parse_split(known.split)
    else:
        raise NeedsPatternError(f"a tiktoken ranks file with no companion {side_name} beside it carries no "
                                "pattern; name one (gpt2, gpt4, o200k, llama3, or regex:PATTERN)")
    found = dict(meta["special_tokens"]) if meta is not None else known.specials(len(ranks)) if known else {}
    found.update(specials or {})
    n_vocab = meta.get("explicit_n_vocab") if meta is not None else None
    if is_count(n_vocab, 1):  # tiktoken's own check of explicit_n_vocab
        every = list(ranks.values())
        top = max([*every, *found.values()])
        if len(every) + len(found) != n_vocab or top != n_vocab - 1:
            raise ForeignModelError(
                f"{side_name} gives explicit_n_vocab {n_vocab}, but the ranks and special tokens number "
                f"{len(every) + len(found)} with the largest id {top}; tiktoken refuses that pair")
    if kept is not None:
        return merges_tokenizer(kept.merges, kept.outside, pre, found, kept.whole, ranks)
    return _recovered(ranks, digest, pre, found, "tiktoken ranks")


def ranks_tokenizer(ranks: dict[bytes, int], pre: PreTokenizer, specials: dict[str, int],
                    what: str = "tiktoken ranks") -> Tokenizer:
    """The model of a ranks table, its ranks kept as the outside ids through an IdMap."""
    merges, outside, whole = recover_merges(ranks, what)
    return merges_tokenizer(merges, outside, pre, specials, whole, ranks)


def merges_tokenizer(merges: list[tuple[int, int]], outside: list[int], pre: PreTokenizer,
                     specials: dict[str, int], whole: list[bytes] = (), ranks: dict[bytes, int] | None = None,
                     roles: Roles = NO_ROLES) -> Tokenizer:
    """The model of recovered merges (`recover_merges`, or the cache of them). With whole-only
    tokens other than the empty one, it encodes by tiktoken's own rule (join "ranks", a whole
    chunk looked up first): the merges do not reach those tokens, and a later-ranked part can
    make one inside a longer chunk. `ranks`, when given, supply the tokens' bytes (no merge
    need be followed to build them)."""
    taken = set(outside)
    tokens = None
    if ranks is not None and whole:
        token_of = dict(zip(ranks.values(), ranks))
        tokens = [token_of[r] for r in outside]
    order = sorted(specials, key=specials.get)
    seen: dict[int, str] = {}
    for s in order:
        sid = specials[s]
        if sid in taken:
            token = _inside_token(merges, outside.index(sid), whole)
            raise ForeignModelError(f"special token {s!r} has id {sid}, which is the rank of {token!r}")
        if sid in seen:
            raise ForeignModelError(f"special tokens {seen[sid]!r} and {s!r} both have id {sid}")
        seen[sid] = s
    ids = outside + [specials[s] for s in order]
    # tiktoken's own rule where the merges cannot give its ids: a whole-only token other than
    # the empty one, or a merge whose part is ranked after it (reached in a longer chunk)
    pairs = np.array(merges, dtype=np.int64).reshape(-1, 2)
    exact = any(whole) or bool((pairs.max(axis=1, initial=0) >= 256 + np.arange(len(pairs))).any())
    fields = dict(units="byte", normalizer="none", pre_tokenizer=pre, tie_break="first", base=None,
                  merges=tuple(merges), special_tokens=tuple(order), ids=IdMap.of(ids), roles=roles,
                  whole_tokens=tuple(whole), whole_chunk=exact, join="ranks" if exact else "merges",
                  tiktoken_text=True)  # tiktoken encodes what its pattern matches
    if tokens is not None:
        return Tokenizer.with_tokens(tokens, **fields)
    return Tokenizer(**fields)


def _inside_token(merges: list[tuple[int, int]], inside: int, whole=()) -> bytes:
    if inside < 256:
        return bytes([inside])
    if inside >= 256 + len(merges):
        return whole[inside - 256 - len(merges)]
    a, b = merges[inside - 256]
    return _inside_token(merges, a, whole) + _inside_token(merges, b, whole)


CACHE_FROM_BYTES = 1 << 16  # smaller ranks files recover their merges in a few ms: not worth a file


def cached_ranks_tokenizer(raw: bytes, pre: PreTokenizer, specials: dict[str, int],
                           max_token_bytes: int = MAX_TOKEN_BYTES, digest: str | None = None,
                           what: str = "tiktoken ranks") -> Tokenizer:
    """`ranks_tokenizer(parse_ranks(raw))`, with the recovered merges kept in the derived cache
    (derivedcache.py) under the ranks' SHA-256 (`digest`, when the caller has it already): the
    next load of the same bytes checks the kept merges against the ranks instead of recovering
    them again."""
    if len(raw) < CACHE_FROM_BYTES:
        digest = None
    elif digest is None:
        digest = ranks_digest(raw)
    ranks = parse_ranks(raw, max_token_bytes)
    kept = _kept(digest, ranks)
    if kept is not None:
        return merges_tokenizer(kept.merges, kept.outside, pre, specials, kept.whole, ranks)
    return _recovered(ranks, digest, pre, specials, what)


def ranks_model(ranks: dict[bytes, int], digest: str | None, pre: PreTokenizer, specials: dict[str, int],
                what: str, roles: Roles = NO_ROLES) -> Tokenizer:
    """The model of parsed ranks (a tekken file's), its merges kept in the derived cache under
    `digest` (None: not kept)."""
    kept = _kept(digest, ranks)
    if kept is not None:
        return merges_tokenizer(kept.merges, kept.outside, pre, specials, kept.whole, ranks, roles)
    return _recovered(ranks, digest, pre, specials, what, roles)


def _kept(digest: str | None, ranks: dict[bytes, int]) -> "derivedcache.DerivedMerges | None":
    """The cached merges of the ranks whose SHA-256 is `digest`, if they are what `ranks`
    define (None: not cached, or not to be trusted)."""
    if digest is None:
        return None
    kept = derivedcache.load(digest)
    return kept if kept is not None and derivedcache.matches(kept, ranks) else None


def _recovered(ranks: dict[bytes, int], digest: str | None, pre: PreTokenizer, specials: dict[str, int],
               what: str, roles: Roles = NO_ROLES) -> Tokenizer:
    merges, outside, whole = recover_merges(ranks, what)
    tok = merges_tokenizer(merges, outside, pre, specials, whole, ranks, roles)  # its errors are checked before anything is kept
    if digest is not None:
        derivedcache.store(digest, derivedcache.DerivedMerges(merges, outside, max(map(len, ranks)), tuple(whole)))
    return tok


# -- export ------------------------------------------------------------------------------------
def rank_of_inside(tok: Tokenizer) -> list[int]:
    """Each ordinary token's rank in a ranks file: its outside id (ranks are ids in tiktoken)."""
    return tok.to_outside(list(range(tok.ordinary_size)))


def check_tiktoken(tok: Tokenizer) -> None:
    """tiktoken re-derives each token from the ranks; refuse a model where that disagrees. The
    ranks are the outside ids: merges must take increasing ids (a merge's priority is its rank),
    and each merged token must be what tiktoken's rule makes of its bytes."""
    outside = rank_of_inside(tok)
    if tok.join == "ranks":
        return  # its ids are tiktoken's rule over these very ranks
    if tok.join != "merges" or any(tok.whole_tokens) or tok.whole_chunk:
        raise ExportError("tiktoken joins by the ranks of joined bytes; this model joins by its own "
                          "list of pairs (an HF file's), which a ranks file cannot hold")
    merged = outside[tok.base_size:]
    for k in range(1, len(merged)):
        if merged[k] <= merged[k - 1]:
            z = tok.base_size + k
            raise ExportError(
                f"tiktoken applies merges in the order of their ids; token {merged[k]} "
                f"({tok.rank_text(z)!r}) is merged after token {merged[k - 1]}, so its id cannot be its rank")
    ranks = {t: outside[i] for i, t in enumerate(tok.ranked_tokens)}
    for r in range(len(tok.merges)):
        z = tok.base_size + r
        data = tok.ranked_tokens[z]
        if tiktoken_parts(ranks, data) != [data] or tok.apply_merges(list(data)) != [z]:
            raise ExportError(
                f"tiktoken would encode token {outside[z]} ({tok.rank_text(z)!r}) differently: it joins the "
                "lowest-ranked bytes, not the recorded merges, and here the two disagree"
            )


def to_tiktoken(tok: Tokenizer) -> tuple[str, dict]:
    """The ranks file (lines in rank order) and its companion: what `tiktoken.Encoding` needs
    besides the ranks, and the SHA-256 of the ranks that ties the two together."""
    outside = rank_of_inside(tok)
    order = sorted(range(len(outside)), key=outside.__getitem__)
    tokens = tok.ranked_tokens
    # the empty token as Whisper writes it: b64decode('=') is b''
    lines = [f"{base64.b64encode(tokens[i]).decode('ascii') or '='} {outside[i]}" for i in order]
    ranks = "\n".join(lines) + "\n"
    top = max([*outside, *tok.special_ids.values()], default=-1)
    meta = {
        "format": COMPANION_FORMAT,
        "pat_str": tok.pre_tokenizer.pattern,
        "special_tokens": tok.special_ids,
        # tiktoken checks explicit_n_vocab only where the ids leave no gap
        "explicit_n_vocab": tok.vocab_size if top == tok.vocab_size - 1 else None,
        "ranks_sha256": ranks_digest(ranks.encode("ascii")),
    }
    return ranks, meta


def write_tiktoken(tok: Tokenizer, out: Path) -> list[str]:
    """Both files or neither (`write_atomic_all`): both are written in full before either
    replaces an old one, so a failed export (a full disk) leaves the old pair working. The
    companion is renamed first (see the module docstring)."""
    ranks, meta = to_tiktoken(tok)
    side = companion_path(out)
    write_atomic_all([(side, json.dumps(meta, ensure_ascii=False, indent=1).encode("utf-8")),
                      (out, ranks.encode("ascii"))])
    return [f"wrote {out} and {side}"]


def tiktoken_encoding(path: str | Path, name: str | None = None):
    """Build a `tiktoken.Encoding` from our tiktoken export (OUT and OUT.json), checking that the
    two belong together.

    Reads the ranks itself: tiktoken's own `load_tiktoken_bpe` caches files by path, so a
    re-exported file at the same path would be read stale.
    """
    import tiktoken  # only needed by whoever calls this

    path = Path(path)
    raw = read_model_file(path)
    meta = read_companion(path, raw)
    if meta is None:
        raise NeedsPatternError(f"{path} has no companion {companion_path(path).name}; tiktoken needs its pattern")
    ranks = parse_ranks(raw)
    return tiktoken.Encoding(
        name=name or path.stem, pat_str=meta["pat_str"], mergeable_ranks=ranks,
        special_tokens=meta["special_tokens"], explicit_n_vocab=meta["explicit_n_vocab"],
    )
