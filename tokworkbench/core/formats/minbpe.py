"""minbpe `.model` files: a version line, the pattern, the special tokens, then one merge a line.

minbpe reads the file in text mode, one `readline()` a line, so a line ends at \\n, \\r\\n or
\\r and nowhere else; this reader splits the same way (not `str.splitlines`, which also breaks
at \\x0b, \\x1c, U+2028 and more). A special token or pattern holding a line break cannot be
written, and the export refuses it.
"""

import re

from tokworkbench.core.bpe.model import Tokenizer
from tokworkbench.core.errors import ExportError, ForeignModelError
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, check_token_lengths, whole_number
from tokworkbench.core.models.idmap import IdMap
from tokworkbench.core.text.pretokenize import from_pattern

HEADER = "minbpe v1"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_MERGE = re.compile(r"[0-9]+ [0-9]+")
_SPECIAL = re.compile(r"(.+) ([0-9]+)", re.DOTALL)
MAX_ID = (1 << 63) - 1  # more than any file can hold; a longer number is refused before it is converted
MAX_SPECIAL_ID = (1 << 31) - 1  # an id stays a signed 32-bit number, as SentencePiece's ids are and HF's fit


def from_minbpe(raw: bytes | str, max_token_bytes: int = MAX_TOKEN_BYTES) -> Tokenizer:
    text = _text(raw)
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != HEADER:
        found = lines[0][:40] if lines else ""
        raise ForeignModelError(f"the first line is {found!r}; this tool reads {HEADER!r} files")
    if len(lines) < 3 or not lines[2].isascii() or not lines[2].isdigit():
        raise ForeignModelError("not a minbpe v1 .model file: line 3 must be the number of special tokens")
    n_special = whole_number(lines[2], MAX_ID, "line 3: the number of special tokens", ForeignModelError)
    if 3 + n_special > len(lines):
        raise ForeignModelError(f"line 3 announces {n_special} special tokens; the file has {len(lines) - 3} lines after it")
    specials = _specials(lines[3 : 3 + n_special])
    merges = _merges(lines[3 + n_special :], 4 + n_special)
    check_token_lengths([1] * 256, merges, max_token_bytes)
    order = sorted(specials, key=specials.get)
    ordinary = 256 + len(merges)
    _check_special_ids(specials, order, ordinary)
    ids = IdMap.of(list(range(ordinary)) + [specials[s] for s in order])
    return Tokenizer("byte", "none", from_pattern(lines[1]), "first", None, tuple(merges), tuple(order), ids=ids)


def _check_special_ids(specials: dict[str, int], order: list[str], ordinary: int) -> None:
    """A special token may take any id the bytes and merges leave free (minbpe's own test saves
    GPT-4's at 100257 and up, after 64 merges), each its own, up to MAX_SPECIAL_ID."""
    seen: dict[int, str] = {}
    for s in order:
        sid = specials[s]
        if sid < ordinary:
            raise ForeignModelError(f"special token {s!r} has id {sid}, which is a byte's or a merge's "
                                    f"(ids 0..{ordinary - 1}); a special token needs an id of its own")
        if sid > MAX_SPECIAL_ID:
            raise ForeignModelError(f"special token {s!r} has id {sid:,}; this tool reads special ids up to "
                                    f"{MAX_SPECIAL_ID:,}")
        if sid in seen:
            raise ForeignModelError(f"special tokens {seen[sid]!r} and {s!r} both have id {sid}")
        seen[sid] = s


def _text(raw: bytes | str) -> str:
    if isinstance(raw, str):
        return raw
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ForeignModelError(f"not UTF-8 at byte offset {exc.start} (line {line}); minbpe files are UTF-8") from None


def _specials(lines: list[str]) -> dict[str, int]:
    specials: dict[str, int] = {}
    for k, line in enumerate(lines, 4):
        m = _SPECIAL.fullmatch(line)
        if not m:
            raise ForeignModelError(f"line {k} is {line[:40]!r}; a special token line is 'TOKEN ID'")
        if m[1] in specials:
            raise ForeignModelError(f"line {k}: special token {m[1]!r} appears twice")
        specials[m[1]] = whole_number(m[2], MAX_ID, f"line {k}: the id", ForeignModelError)
    return specials


def _merges(lines: list[str], first_line: int) -> list[tuple[int, int]]:
    merges = []
    for k, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        if not _MERGE.fullmatch(line.strip()):
            raise ForeignModelError(f"line {k} is {line[:40]!r}; a merge line is 'ID ID'")
        a, b = (whole_number(x, MAX_ID, f"line {k}: the id", ForeignModelError) for x in line.split())
        r = len(merges)
        if not (a < 256 + r and b < 256 + r):
            raise ForeignModelError(f"line {k}: merge {r} is ({a}, {b}); it must be two ids below {256 + r}")
        merges.append((a, b))
    return merges


def check_minbpe(tok: Tokenizer) -> None:
    """What a minbpe file cannot carry: whitespace inside a special token, a line break in the pattern."""
    for s in tok.special_tokens:
        if s.split() != [s]:
            raise ExportError(f"minbpe reads each special token line as 'TOKEN ID' split at whitespace; "
                              f"the special token {s!r} holds whitespace, so it would not read back")
    if tok.pre_tokenizer.pattern and _LINE_BREAK.search(tok.pre_tokenizer.pattern):
        raise ExportError("minbpe stores the pattern on one line; this pattern holds a line break")


def to_minbpe(tok: Tokenizer) -> str:
    check_minbpe(tok)
    lines = [HEADER, tok.pre_tokenizer.pattern or "", str(len(tok.special_tokens))]
    lines += [f"{s} {i}" for s, i in tok.special_ids.items()]
    lines += [f"{a} {b}" for a, b in tok.merges]
    return "\n".join(lines) + "\n"
