"""Fixed vocabularies: TOKENS.txt (one token per line, in id order) and the model file.

TOKENS.txt is UTF-8, one token per line; the line's number (from 0) is its id. A token that
holds a character a line cannot show is written with an escape:
    \\n  newline      \\t  tab      \\r  carriage return      \\\\  backslash
    \\s  a space (for a token that is, or ends with, a space someone's editor might trim)
Any other backslash sequence is an error, so a typo never becomes a token silently. Blank
lines are errors too (no token is empty), a final line end is optional, and CRLF files read
as LF. The model file is our JSON with "model": "fixed" (see `to_json`).
"""

from tokworkbench.core.errors import ModelFileError, TokWorkbenchError, VocabFileError
from tokworkbench.core.files.envelope import header
from tokworkbench.core.files.limits import MAX_TOKEN_BYTES, is_count, is_text
from tokworkbench.core.fixed.model import KIND, FixedVocab
from tokworkbench.core.models.roles import Roles

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "s": " "}


def unescape(line: str, lineno: int, name: str = "TOKENS.txt") -> str:
    out = []
    chars = iter(enumerate(line))
    for col, ch in chars:
        if ch != "\\":
            out.append(ch)
            continue
        nxt = next(chars, (col + 1, ""))[1]
        if nxt not in _ESCAPES:
            shown = f"\\{nxt}" if nxt else "a lone \\ at the end"
            raise VocabFileError(f"{name} line {lineno}: {shown} is not an escape (use \\n \\t \\r \\s or \\\\)")
        out.append(_ESCAPES[nxt])
    return "".join(out)


def escape(token: str) -> str:
    """The TOKENS.txt line of a token (the inverse of `unescape`)."""
    out = token.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")
    return out[:-1] + "\\s" if out.endswith(" ") else out


def parse_tokens(text: str, name: str = "TOKENS.txt") -> list[str]:
    """The tokens of a TOKENS.txt, in id order; VocabFileError for an empty file, a blank line,
    a bad escape or a token given twice (naming both lines)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise VocabFileError(f"{name} is empty: give one token per line, in id order")
    tokens: list[str] = []
    seen: dict[str, int] = {}
    for k, raw in enumerate(lines):
        lineno = k + 1
        raw = raw[:-1] if raw.endswith("\r") else raw
        if raw == "":
            raise VocabFileError(f"{name} line {lineno} is blank; no token is empty (remove the line)")
        token = unescape(raw, lineno, name)
        if token in seen:
            raise VocabFileError(f"{name} line {lineno} repeats the token of line {seen[token]} ({raw!r}); "
                                 "each token appears once")
        seen[token] = lineno
        tokens.append(token)
    return tokens


def to_json(model: FixedVocab, corpus: dict | None = None) -> dict:
    """Our file (files/envelope.py); a fixed vocabulary learns nothing from a corpus, so
    `corpus` is not kept."""
    return {
        **header(KIND),
        "tokens": list(model.tokens),
        "special_tokens": model.special_ids,
        "roles": model.roles.to_dict(),
    }


def from_json(doc: dict, max_token_bytes: int = MAX_TOKEN_BYTES) -> FixedVocab:
    tokens = doc.get("tokens")
    if not isinstance(tokens, list) or not tokens or not all(is_text(t) and t for t in tokens):
        raise ModelFileError("a fixed vocabulary needs 'tokens': a non-empty list of non-empty strings")
    longest = max(range(len(tokens)), key=lambda i: len(tokens[i]))
    if len(tokens[longest].encode("utf-8", "surrogatepass")) > max_token_bytes:
        raise ModelFileError(f"token {longest} is longer than {max_token_bytes:,} bytes (the longest a loader accepts)")
    specials = doc.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(is_count(i) and i < len(tokens) and tokens[i] == s
                                                 for s, i in specials.items()):
        raise ModelFileError("'special_tokens' must map tokens of 'tokens' to their ids")
    try:
        roles = Roles.of(doc.get("roles"))
        extra = tuple(s for s in specials if roles.role_of(s) is None)
        return FixedVocab(tuple(tokens), roles, extra)
    except TokWorkbenchError as exc:
        raise ModelFileError(str(exc)) from None
