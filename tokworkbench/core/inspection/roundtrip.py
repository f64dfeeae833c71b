"""Encode/decode checks the workbench shows: a round-trip verdict and what strict/replace decode."""

from collections.abc import Sequence
from dataclasses import dataclass

from tokworkbench.core.errors import DecodeError, TokWorkbenchError
from tokworkbench.core.files.limits import MAX_ID, short, within
from tokworkbench.core.inspection.segments import TokenSpan, text_spans


@dataclass(frozen=True)
class RoundTrip:
    text: str
    normalized: str
    ids: list[int]
    spans: list[TokenSpan]
    decoded: str
    error: str | None  # encoding failed (e.g. unseen character with char units)

    @property
    def ok(self) -> bool:
        return self.error is None and self.decoded == self.text

    @property
    def first_difference(self) -> int | None:
        """Char offset where decode(encode(text)) first differs from text (None if equal)."""
        if self.error is not None:
            return 0
        for i, (x, y) in enumerate(zip(self.text, self.decoded)):
            if x != y:
                return i
        return None if len(self.text) == len(self.decoded) else min(len(self.text), len(self.decoded))


def round_trip(tokenizer, text: str) -> RoundTrip:
    try:
        normalized, spans = text_spans(tokenizer, text)
        ids = [s.token for s in spans]
        decoded = tokenizer.decode(ids, errors="replace")
    except TokWorkbenchError as exc:
        return RoundTrip(text, text, [], [], "", str(exc))
    return RoundTrip(text, normalized, ids, spans, decoded, None)


@dataclass(frozen=True)
class Utf8Problem:
    start: int  # byte offset
    end: int
    reason: str  # Python's words: "unexpected end of data", "invalid start byte", ...


@dataclass(frozen=True)
class DecodeReport:
    ids: list[int]
    data: bytes | None
    strict: str | None
    strict_error: str | None
    replace: str | None
    problems: tuple[Utf8Problem, ...] = ()


def utf8_problems(data: bytes) -> tuple[Utf8Problem, ...]:
    """Every stretch of `data` that is not UTF-8, as `errors=replace` would replace it."""
    problems = []
    pos = 0
    while pos < len(data):
        try:
            data[pos:].decode("utf-8")
            break
        except UnicodeDecodeError as exc:
            problems.append(Utf8Problem(pos + exc.start, pos + exc.end, exc.reason))
            pos += exc.end
    return tuple(problems)


def parse_ids(raw: str) -> list[int]:
    """Ids written in ASCII digits, separated by spaces or commas (a JSON list too). int() alone
    took '١٢٠' (Arabic-Indic digits) and '1_0_4' for ids, and quoted 5,000 digits back."""
    ids = []
    for part in raw.replace(",", " ").replace("[", " ").replace("]", " ").split():
        if not (part.isascii() and part.isdigit() and within(part, MAX_ID)):
            raise DecodeError(f"{short(part)} is not an id (ids are whole numbers from 0 to {MAX_ID:,})")
        ids.append(int(part))
    return ids


def decode_report(tokenizer, ids: Sequence[int]) -> DecodeReport:
    """Both decodings side by side; an out-of-range id fails both, bad UTF-8 fails strict only."""
    ids = list(ids)
    try:
        data = tokenizer.decode_bytes(ids)
        replace = tokenizer.decode(ids, errors="replace")
    except DecodeError as exc:
        return DecodeReport(ids, None, None, str(exc), None)
    try:
        return DecodeReport(ids, data, tokenizer.decode(ids, errors="strict"), None, replace)
    except DecodeError as exc:
        return DecodeReport(ids, data, None, str(exc), replace, utf8_problems(data))
