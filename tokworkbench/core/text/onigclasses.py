"""A file's regex with its Unicode classes as Oniguruma (inside `tokenizers`) reads them.

The regex module's Unicode is newer than Oniguruma's: `\\p{L}` there holds ~17k code points
more, so text with characters assigned since would split otherwise than in HF. Each `\\p{X}`
(and `\\P{X}`, `\\d`, `\\w`, `\\D`, `\\W`) whose class was measured (hftables.ONIG) becomes that
class spelled out as code point ranges, inside a set or as a set of its own; any other part of
the pattern is copied as it is. Only the compiled pattern changes: a model keeps the file's.
"""

from functools import lru_cache

from tokworkbench.core.text.hftables import ONIG


def _ranges(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


@lru_cache(maxsize=64)
def oniguruma_classes(pattern: str) -> str:
    """The pattern with each measured class spelled out (module docstring)."""
    out: list[str] = []
    depth = 0  # inside [...] sets
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            name, size, negated = _class_at(pattern, i)
            if name is not None:
                spelled = _ranges(ONIG[name])
                if depth:
                    if negated:  # a negated class inside a set: left as it is
                        out.append(pattern[i:i + size])
                    else:
                        out.append(spelled)
                else:
                    out.append(f"[{'^' if negated else ''}{spelled}]")
                i += size
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if c == "[":
            if depth == 0 or pattern.startswith("[:", i):
                depth += 1
                out.append(c)
                i += 1
                if depth == 1:  # a ']' first in a set (after an optional '^') is a literal
                    if i < n and pattern[i] == "^":
                        out.append("^")
                        i += 1
                    if i < n and pattern[i] == "]":
                        out.append("]")
                        i += 1
                continue
        elif c == "]" and depth:
            depth -= 1
        out.append(c)
        i += 1
    return "".join(out)


def _class_at(pattern: str, i: int) -> tuple[str | None, int, bool]:
    """(measured class name, characters it spans, negated?) of the escape at i, or None."""
    letter = pattern[i + 1]
    if letter in "dwDW":
        return letter.lower(), 2, letter.isupper()
    if letter in "pP" and pattern.startswith("{", i + 2):
        end = pattern.find("}", i + 3)
        if end < 0:
            return None, 0, False
        name = pattern[i + 3:end]
        negated = letter == "P"
        if name.startswith("^"):
            name, negated = name[1:], not negated
        if name in ONIG:
            return name, end + 1 - i, negated
    return None, 0, False
