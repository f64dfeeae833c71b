"""Hugging Face's NFC, NFD, NFKC and NFKD, which our `nfc`/`nfkc` normalizers are too.

HF normalizes with an older Unicode (the unicode-normalization crate's tables) than Python's
`unicodedata`: it keeps the characters newer versions decompose (U+32FF ㋿, Latin and Hebrew
modifier letters), takes newer combining marks for starters, and does not compose the newer
pairs. A model must give the same ids here and in the library that loads its tokenizer.json, so
the forms are HF's: Python's, except at the measured code points (berttables.py), which take
HF's result and cut the text where they stand, since for HF they are starters that neither
compose nor reorder with their neighbours.
"""

from __future__ import annotations

import functools
import re
import unicodedata


def normalize(form: str, text: str) -> str:
    own, table = _own(form)
    if not own.search(text):
        return unicodedata.normalize(form, text)
    parts, pos = [], 0
    for m in own.finditer(text):
        c = m.group()
        hf = table[ord(c)] if ord(c) in table else unicodedata.normalize(form, c)
        parts += [unicodedata.normalize(form, text[pos:m.start()]), hf]
        pos = m.end()
    parts.append(unicodedata.normalize(form, text[pos:]))
    return "".join(parts)


@functools.cache
def _own(form: str) -> tuple[re.Pattern, dict[int, str]]:
    """The code points where HF parts from Python under `form`, as one character class."""
    from tokworkbench.core.text import berttables  # 1,700 lines of tables: read on first use

    table = {"NFC": berttables.NFC, "NFD": berttables.NFD, "NFKC": berttables.NFKC, "NFKD": berttables.NFKD}[form]
    ranges = list(berttables.STARTERS) + [(c, c) for c in table]
    if form in ("NFC", "NFKC"):
        ranges += list(berttables.UNPAIRED)
    body = "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in sorted(ranges))
    return re.compile(f"[{body}]"), table
