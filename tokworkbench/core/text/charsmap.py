"""SentencePiece's precompiled character map: the rewrite table behind `nmt_nfkc` and friends.

The blob (`normalizer_spec.precompiled_charsmap`, the same bytes HF keeps base64 in
`Precompiled.precompiled_charsmap`) is `<trie size: u32 LE><darts-clone double array><NUL-
terminated replacement strings>`. The trie maps a UTF-8 key (the text to rewrite) to an offset
in the strings. A real map (nmt_nfkc) holds ~225k keys in 45k units: darts-clone shares
suffixes, so the trie is a DAG and listing every key costs seconds. We read only what the fast
path needs, in numpy: the characters that are keys, those that start a longer key, and the
characters that can come second. A regex over those finds every position where a key could
match; only there is the trie searched (in Python, as darts-clone does); the rest of the text
maps to itself.

Two ways to use the table, each exact for its library:
- SentencePiece (`longest_at`): at each position the longest key that starts there
  (`Normalizer::NormalizePrefix`); no key: one character as it is.
- HF (`hf_transform`): per grapheme cluster of under 6 bytes, the *shortest* key that is a
  prefix of it replaces the whole cluster; otherwise each character alone (spm_precompiled's
  `normalize_string`, kept as HF wrote it).
"""

from dataclasses import dataclass, field

import numpy as np
import regex

from tokworkbench.core.errors import ModelFileError

MAX_DEPTH = 64  # bytes in a key; real maps stay under 20
_GRAPHEME = regex.compile(r"\X")
_LEADS = [*range(1, 0x80), *range(0xC2, 0xF5)]  # bytes that start a UTF-8 character (NUL ends a key)
_TAIL = {**{b: 0 for b in range(1, 0x80)}, **{b: 1 for b in range(0xC2, 0xE0)},
         **{b: 2 for b in range(0xE0, 0xF0)}, **{b: 3 for b in range(0xF0, 0xF5)}}


@dataclass
class CharsMap:
    """A precompiled charsmap, searched as darts-clone searches it. `hits` finds every
    position where some key could start a match; text elsewhere maps to itself."""

    blob: bytes
    units: list[int] = field(repr=False)
    strings: bytes = field(repr=False)
    single: np.ndarray = field(repr=False)
    """Per code point: whether that character alone is a key."""
    first: np.ndarray = field(repr=False)
    """Per code point: whether it starts a longer key."""
    second: np.ndarray = field(repr=False)
    """Per code point: whether it is the second character of some longer key."""
    _values: dict[int, str] = field(default_factory=dict, repr=False)

    def hits(self, text: str) -> np.ndarray:
        """Positions where some key may match, ascending (numpy over the code points; a lone
        surrogate is looked up like any code point)."""
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        hit = self.single[cps]
        hit[:-1] |= self.first[cps[:-1]] & self.second[cps[1:]]
        return np.flatnonzero(hit)

    def __eq__(self, other) -> bool:
        return isinstance(other, CharsMap) and other.blob == self.blob

    def __hash__(self) -> int:
        return hash(self.blob)

    def search(self, data: bytes) -> list[tuple[int, int]]:
        """(key length in bytes, value) of every key that is a prefix of `data`, shortest
        first (darts-clone's commonPrefixSearch)."""
        units, n = self.units, len(self.units)
        out = []
        pos = _offset1(units[0])
        try:
            for i, c in enumerate(data):
                if c == 0:
                    break
                pos ^= c
                unit = units[pos]
                if unit & 0x800000FF != c:
                    break
                pos ^= _offset1(unit)
                if (unit >> 8) & 1:
                    out.append((i + 1, units[pos] & 0x7FFFFFFF))
        except IndexError:
            raise ModelFileError("precompiled charsmap is damaged: its trie points outside itself") from None
        if pos >= n:
            raise ModelFileError("precompiled charsmap is damaged: its trie points outside itself")
        return out

    def value(self, at: int) -> str:
        text = self._values.get(at)
        if text is None:
            end = self.strings.find(b"\0", at)
            if at >= len(self.strings) or end < 0:
                raise ModelFileError(f"precompiled charsmap is damaged: a replacement at {at:,} runs past its end")
            try:
                text = self._values[at] = self.strings[at:end].decode("utf-8")
            except UnicodeDecodeError:
                raise ModelFileError("precompiled charsmap is damaged: a replacement is not UTF-8") from None
        return text

    def _chars(self, text: str, i: int, size: int) -> int:
        """Characters of text[i:] that `size` bytes cover (a key ends on a character boundary)."""
        data = text[i : i + size].encode("utf-8", "surrogatepass")
        k = len(data[:size].decode("utf-8", "ignore"))
        if len(text[i : i + k].encode("utf-8", "surrogatepass")) != size:
            raise ModelFileError("precompiled charsmap is damaged: a key ends inside a character")
        return k

    def longest_at(self, text: str, i: int) -> tuple[str, int] | None:
        """SentencePiece: (replacement, characters consumed) of the longest key at `i`."""
        found = self.search(text[i : i + MAX_DEPTH].encode("utf-8", "surrogatepass"))
        if not found:
            return None
        size, at = found[-1]
        return self.value(at), self._chars(text, i, size)

    def hf_transform(self, text: str) -> str:
        """HF's Precompiled normalizer (spm_precompiled): a grapheme cluster under 6 bytes is
        replaced whole by the value of the *shortest* key that is a prefix of it; otherwise each
        character alone by its own key's value. Only the stretches around a hit are cut into
        clusters: between two ASCII characters (but CR LF) there is always a cluster boundary."""
        if not text:
            return text
        hits = self.hits(text)
        if not len(hits):
            return text
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        ascii_ = cps < 0x80
        cut = np.flatnonzero(ascii_[:-1] & ascii_[1:] & ~((cps[:-1] == 13) & (cps[1:] == 10)))
        safe = np.concatenate(([0], cut + 1, [len(text)]))
        k = np.searchsorted(safe, hits, side="right")
        lo, hi = safe[k - 1].tolist(), safe[k].tolist()
        out, pos = [], 0
        for a, b in zip(lo, hi):
            if a < pos:
                continue  # the same stretch as the last hit
            out.append(text[pos:a])
            out.append(self._clusters(text[a:b]))
            pos = b
        out.append(text[pos:])
        return "".join(out)

    def _clusters(self, text: str) -> str:
        out = []
        single = self.single
        for g in _GRAPHEME.findall(text):
            if len(g) == 1 and not single[ord(g)]:
                out.append(g)  # one character that is no key: itself
                continue
            data = g.encode("utf-8", "surrogatepass")
            if len(data) < 6:
                found = self.search(data)
                if found:
                    out.append(self.value(found[0][1]))
                    continue
            for c in g:
                size = len(c.encode("utf-8", "surrogatepass"))
                found = [v for n, v in self.search(c.encode("utf-8", "surrogatepass")) if n == size]
                out.append(self.value(found[0]) if found else c)
        return "".join(out)


    def agrees_with_hf(self) -> bool:
        """Whether HF's rule gives SentencePiece's on every text: no key longer than one
        character (longest and shortest match are then the same), and every key a character
        that is always a grapheme cluster of its own (a control, or LF: CR would join a following
        LF), so that HF never replaces a cluster whole where SentencePiece maps one character.
        No value holds two spaces, which HF's collapsing after the map would change."""
        if self.first.any():
            return False
        keys = np.flatnonzero(self.single)
        if len(keys) > 4096:
            return False  # real maps hold thousands of letters: no need to look
        for cp in keys.tolist():
            c = chr(cp)
            hit = self.longest_at(c, 0) if _OWN_CLUSTER.fullmatch(c) else None
            if hit is None or "  " in hit[0]:
                return False
        return True

    def hf_differs_at(self, limit: int = 2000) -> str | None:
        """A short text where HF's rule and SentencePiece's give different results, if one of
        the probes finds it: a key character followed by a combining mark, a joiner, itself."""
        keys = sorted(np.flatnonzero(self.single).tolist(), key=lambda cp: (not chr(cp).isalpha(), cp))
        for cp in keys[:limit]:
            c = chr(cp)
            for probe in (c + "\u0301", c + "\u200d", c + c, "a" + c, c + "\n"):
                if self.hf_transform(probe) != self.sp_transform(probe):
                    return probe
        return None

    def sp_transform(self, text: str) -> str:
        """SentencePiece's rule alone, no whitespace handling: the longest key at each position."""
        out, i = [], 0
        while i < len(text):
            hit = self.longest_at(text, i)
            if hit is None:
                out.append(text[i])
                i += 1
            else:
                out.append(hit[0])
                i += hit[1]
        return "".join(out)


_OWN_CLUSTER = regex.compile(r"[\p{Grapheme_Cluster_Break=Control}\p{Grapheme_Cluster_Break=LF}]")


def _offset1(u: int) -> int:
    return (u >> 10) << ((u & (1 << 9)) >> 6)


def read_charsmap(blob: bytes) -> CharsMap:
    """A precompiled charsmap, checked where it can be without reading every key (a real
    one holds ~225k keys in a suffix-shared trie); damage found later is the same one-line
    ModelFileError."""
    if len(blob) <= 4:
        raise ModelFileError("precompiled charsmap is damaged: shorter than its 4-byte header")
    size = int.from_bytes(blob[:4], "little")
    if size == 0 or size % 4 or size + 4 >= len(blob):
        raise ModelFileError(f"precompiled charsmap is damaged: its trie claims {size:,} bytes of {len(blob) - 4:,}")
    units = np.frombuffer(blob, dtype="<u4", count=size // 4, offset=4).astype(np.int64)
    strings = bytes(blob[4 + size :])
    singles, multi, seconds = _first_chars(units)
    cm = CharsMap(bytes(blob), units.tolist(), strings, _table(singles), _table(multi), _table(seconds))
    for c in list(singles)[:64]:  # a few values read now: a damaged string table fails at load
        cm.longest_at(c, 0)
    return cm


def _table(chars: set[str]) -> np.ndarray:
    out = np.zeros(0x110000, dtype=bool)
    out[[ord(c) for c in chars]] = True
    return out


def _children(units: np.ndarray, label: np.ndarray, bases: np.ndarray, bytes_: list[int]):
    """(parent row, byte, child position) of each child of the nodes at `bases` over `bytes_`."""
    n = len(units)
    if len(bases) and (bases.min() < 0 or bases.max() >= n):
        raise ModelFileError("precompiled charsmap is damaged: its trie points outside itself")
    cs = np.array(bytes_, dtype=np.int64)
    pos = bases[:, None] ^ cs[None, :]
    inside = pos < n
    ok = inside & (label[np.where(inside, pos, 0)] == cs[None, :])
    rows, cols = np.nonzero(ok)
    return rows, cs[cols], pos[rows, cols]


def _first_chars(units: np.ndarray) -> tuple[set[str], set[str], set[str]]:
    """Characters that are keys, characters that start a longer key, and the characters
    that come second in some longer key: what the hit pattern needs, read breadth first in
    numpy one character deep from the root and one more from each node reached."""
    label = units & 0x800000FF
    leaf = (units >> 8) & 1
    cont = list(range(0x80, 0xC0))

    def one_char(starts: np.ndarray) -> tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray]:
        """Every full character readable from each start node: (its bytes, start row, node, leaf)."""
        rows, cs, child = _children(units, label, starts, _LEADS)
        keys = [bytes([c]) for c in cs.tolist()]
        need = np.array([_TAIL[c] for c in cs.tolist()], dtype=np.int64)
        origin = rows
        bases = child ^ _offset(units[child])
        done_k, done_o, done_b, done_l = [], [], [], []
        for _ in range(4):
            fin = need == 0
            idx = np.nonzero(fin)[0]
            done_k += [keys[i] for i in idx.tolist()]
            done_o.append(origin[idx])
            done_b.append(bases[idx])
            done_l.append(leaf[child[idx]])
            rest = np.nonzero(~fin)[0]
            if not len(rest):
                break
            r2, c2, ch2 = _children(units, label, bases[rest], cont)
            keys = [keys[rest[r]] + bytes([c]) for r, c in zip(r2.tolist(), c2.tolist())]
            need, origin = need[rest][r2] - 1, origin[rest][r2]
            child = ch2
            bases = ch2 ^ _offset(units[ch2])
        return done_k, np.concatenate(done_o), np.concatenate(done_b), np.concatenate(done_l)

    root = np.array([_offset(units[:1])[0]], dtype=np.int64)
    keys, _, bases, leaves = one_char(root)
    singles, multi, deeper = set(), set(), []
    for k, b, lf in zip(keys, bases.tolist(), leaves.tolist()):
        try:
            c = k.decode("utf-8")
        except UnicodeDecodeError:
            raise ModelFileError(f"precompiled charsmap is damaged: key bytes {k!r} are not UTF-8") from None
        if lf:
            singles.add(c)
        deeper.append((c, b))
    uniq = np.unique(np.array([b for _, b in deeper], dtype=np.int64))
    seconds: set[str] = set()
    if len(uniq):
        k2, o2, _, _ = one_char(uniq)
        has_child = set(uniq[o2].tolist())
        multi = {c for c, b in deeper if b in has_child}
        for k in set(k2):
            try:
                seconds.add(k.decode("utf-8"))
            except UnicodeDecodeError:
                raise ModelFileError(f"precompiled charsmap is damaged: key bytes {k!r} are not UTF-8") from None
    return singles, multi, seconds


def _offset(u: np.ndarray) -> np.ndarray:
    return (u >> 10) << ((u & (1 << 9)) >> 6)
