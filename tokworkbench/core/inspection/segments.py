"""Token boundaries in text: which characters each token covers, and where a token cuts one.

Views draw from this. Byte-unit tokens may end inside a multi-byte character; such a character
is marked `cut` and belongs, for drawing, to the token that holds its first byte.
"""

from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

from tokworkbench.core.models.protocol import CharLengths


class TokenSpan(NamedTuple):
    """A token's place in drawn text. A named tuple, not a frozen dataclass: a step's snapshot
    makes one per token in the window (about 1,500 at 160x48), and the dataclass's init cost
    about a millisecond and a half of each key's frame."""

    start: int  # char offset of the token's first (possibly partial) character
    end: int  # char offset after its last (possibly partial) character
    token: int
    ordinal: int  # position of the token in the whole sequence (for alternating colours)
    cut: bool  # the token starts or ends inside a character


def chunk_spans(
    pieces: Iterable[tuple], token: Callable[[int], bytes | str], first_ordinal: int = 0,
    char_lengths: Callable[[str, list[int]], list[int]] | None = None,
) -> list[TokenSpan]:
    """Spans for (char offset, chunk text, token ids[, first byte]) pieces; `token(id)` is the
    id's vocabulary entry (bytes, or str for char units): only its length matters here. A piece
    cut from a long chunk may start its first token inside its first character, at `first byte`.
    `char_lengths(chunk, ids)` (char units) says how many characters each id covers where that
    is not its length: an unknown-text token such as `<unk>` covers the characters it stands for."""
    spans: list[TokenSpan] = []
    ordinal = first_ordinal
    for offset, chunk, ids, *rest in pieces:
        if not ids:
            continue
        skip = rest[0] if rest else 0
        data = chunk.encode("utf-8")
        # char units, or ASCII bytes: a token's length is its length in characters
        if isinstance(token(ids[0]), str) or len(data) == len(chunk):
            pos = offset + skip
            chars = char_lengths(chunk, ids) if char_lengths is not None and not skip else None
            for k, t in enumerate(ids):
                n = chars[k] if chars is not None else len(token(t))
                spans.append(TokenSpan(pos, pos + n, t, ordinal, False))
                pos += n
                ordinal += 1
            continue
        char_of = _char_of_byte(chunk)
        b = skip
        for t in ids:
            n = len(token(t))
            first, last = char_of[b], char_of[b + n - 1]
            cut = (b > 0 and char_of[b - 1] == first) or (b + n < len(data) and char_of[b + n] == last)
            spans.append(TokenSpan(offset + first, offset + last + 1, t, ordinal, cut))
            b += n
            ordinal += 1
    return spans


def _char_of_byte(text: str) -> list[int]:
    out: list[int] = []
    for i, ch in enumerate(text):
        out.extend([i] * len(ch.encode("utf-8")))
    return out


def text_spans(tokenizer, text: str) -> tuple[str, list[TokenSpan]]:
    """The normalized text and its token spans under a frozen tokenizer (ordinary encoding)."""
    pieces = []
    pos = 0
    normalized_parts = []
    for chunk, ids in tokenizer.encode_chunks(text):
        pieces.append((pos, chunk, ids))
        normalized_parts.append(chunk)
        pos += len(chunk)
    lengths = tokenizer.char_lengths if isinstance(tokenizer, CharLengths) else None
    return "".join(normalized_parts), chunk_spans(pieces, tokenizer.token, char_lengths=lengths)


def corpus_spans(trainer, doc: int, start: int, end: int, origin: int = 0) -> list[TokenSpan]:
    """Current token spans over chars [start, end) of document `doc`, from the trainer's state,
    with offsets counted from char `origin` of the document.

    Ordinals count from the first chunk in the window, so colours alternate within the window.
    """
    layout = trainer.layouts[doc]
    lo, hi = layout.chunk_range(start, end)
    pieces = []
    for k in range(lo, hi):
        cid = int(layout.chunk_ids[k])
        chunk, at = trainer.chunk_strings[cid], layout.chunk_start(k)
        if len(chunk) > LONG_CHUNK:
            pieces.append(window_piece(trainer, cid, chunk, at, max(start, at) - at, min(end, at + len(chunk)) - at, origin))
        else:
            pieces.append((at - origin, chunk, trainer.chunk_tokens(cid)))
    return chunk_spans(pieces, trainer.token)


def layout_window(learner, doc: int, start: int, end: int,
                  spans: Callable[..., list[TokenSpan]] = corpus_spans) -> tuple[int, str, list[TokenSpan], int]:
    """A learner's `window` over its document layouts (clamped to the document): where it
    starts, its text, its token spans from that start (by `spans`, which takes the arguments
    of `corpus_spans`), and the document's length."""
    if not learner.layouts:
        return 0, "", [], 0
    doc = min(doc, len(learner.layouts) - 1)
    full = learner.layouts[doc].text
    size = end - start
    start = max(0, min(start, max(0, len(full) - 1)))
    end = min(len(full), start + size)
    return start, full[start:end], spans(learner, doc, start, end, origin=start), len(full)


LONG_CHUNK = 8192  # characters; a longer chunk is read only where the window shows it


def window_piece(trainer, cid: int, chunk: str, at: int, a: int, b: int, origin: int) -> tuple:
    """The part of a long chunk that chars [a, b) of it show, as a chunk_spans piece: only the
    tokens that overlap it (drawing all of a 5M-character line's tokens took 19-80 s a step)."""
    if not trainer.config.units.is_bytes:
        first, ids = trainer.chunk_tokens_between(cid, a, b)
        end = first + sum(len(trainer.token(t)) for t in ids)
        return (at + first - origin, chunk[first:end], ids)
    data = chunk.encode("utf-8")
    lo = len(chunk[:a].encode("utf-8"))
    first, ids = trainer.chunk_tokens_between(cid, lo, lo + len(chunk[a:b].encode("utf-8")))
    end = first + sum(len(trainer.token(t)) for t in ids)
    c0 = len(data[:first].decode("utf-8", errors="ignore"))  # the char that holds byte `first`
    c1 = len(data[:end].decode("utf-8", errors="ignore"))
    if len(chunk[:c1].encode("utf-8")) < end:
        c1 += 1  # the last token ends inside a character: take it whole
    return (at + c0 - origin, chunk[c0:c1], ids, first - len(chunk[:c0].encode("utf-8")))


def pair_occurrences(spans: Sequence[TokenSpan], pair: tuple[int, int]) -> list[tuple[int, int]]:
    """Char ranges where `pair` occurs as two adjacent tokens of the same chunk."""
    a, b = pair
    out = []
    for left, right in zip(spans, spans[1:]):
        if left.token == a and right.token == b and left.end >= right.start and right.start >= left.start:
            out.append((left.start, right.end))
    return out


def whole_run(spans: Sequence[TokenSpan], lo: int, hi: int) -> list[TokenSpan]:
    """The tokens inside chars [lo, hi) whose run starts and ends on character boundaries, so
    their bytes are exactly the UTF-8 of text[run[0].start:run[-1].end] (for the byte view)."""
    inside = [i for i, s in enumerate(spans) if s.start >= lo and s.end <= hi]
    if not inside:
        return []
    first, last = inside[0], inside[-1]
    while first <= last and first > 0 and spans[first - 1].end > spans[first].start:
        first += 1  # starts inside a character its left neighbour also holds
    while last >= first and last + 1 < len(spans) and spans[last + 1].start < spans[last].end:
        last -= 1  # ends inside a character its right neighbour also holds
    return list(spans[first : last + 1])
