"""tiktoken's rule for special-token strings in text, for a model kind that has no rule of its own.

A special token's string in the text is an error unless the caller allows it; an allowed one
becomes its id, and the text between is encoded as plain text (longest special first, so
'<|a|>' is not cut by a shorter '<|a').
"""

from collections.abc import Callable, Collection

import regex

from tokworkbench.core.errors import EncodeError, SpecialTokenInTextError


def encode_with_specials(text: str, specials: dict[str, int], allowed_special: Collection[str] | str,
                         disallowed_special: Collection[str] | str,
                         encode_plain: Callable[[str, int], list[int]]) -> list[int]:
    """`encode_plain(piece, offset)` encodes the text between special tokens; `offset` is where
    that piece starts in `text` (so an error can name a place in the caller's text)."""
    allowed = set(specials) if allowed_special == "all" else set(allowed_special)
    unknown = allowed - set(specials)
    if unknown:
        raise EncodeError(f"not a special token of this model: {', '.join(sorted(unknown))}")
    disallowed = (set(specials) - allowed) if disallowed_special == "all" else set(disallowed_special)
    found = [(at, s) for s in disallowed if (at := text.find(s)) >= 0]
    if found:
        at, s = min(found, key=lambda f: (f[0], -len(f[1])))  # the first in the text, the longest there
        raise SpecialTokenInTextError(s, at)
    if not allowed:
        return encode_plain(text, 0)
    ids: list[int] = []
    pos = 0
    pattern = "|".join(regex.escape(s) for s in sorted(allowed, key=len, reverse=True))
    for m in regex.finditer(pattern, text):
        ids.extend(encode_plain(text[pos : m.start()], pos))
        ids.append(specials[m.group()])
        pos = m.end()
    ids.extend(encode_plain(text[pos:], pos))
    return ids
