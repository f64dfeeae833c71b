"""How tokens are written for people: one escaping rule for every view, command and message.

Bytes that are not UTF-8 become \\xNN once (never \\\\xNN, as repr() would double them), spaces
and line ends become visible marks, and other control characters are escaped.
"""

import re
from functools import lru_cache

_CELL = {" ": "␣", "\n": "↵", "\t": "→", "\r": "␍"}


def render_bytes(data: bytes) -> str:
    """Token bytes as text; bytes that are not valid UTF-8 here appear as \\xNN escapes."""
    return data.decode("utf-8", errors="backslashreplace")


def hex_bytes(data: bytes) -> str:
    return " ".join(f"{b:02X}" for b in data)


@lru_cache(maxsize=1 << 16)
def visible(text: str) -> str:
    """Token text for table cells and listings: whitespace made visible, control characters
    (C0, DEL, C1) escaped. (Cached: every step redraws hundreds of table cells that name the
    same tokens.)"""
    out = []
    for ch in text:
        if ch in _CELL:
            out.append(_CELL[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        elif 127 < ord(ch) < 160:  # C1 (U+009B is a CSI to a terminal); not \\x9b, the byte 0x9b's escape
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def quote(text: str) -> str:
    """A token or a pattern inside a sentence: visible, in quotes, with no escape doubled."""
    return "'" + visible(text) + "'"


def printable(text: str) -> str:
    """A report for a terminal: line ends kept, every other control character (C0, DEL, C1,
    such as the ESC of an OSC 52 that writes the clipboard) escaped as \\xNN, so a string from a
    model file cannot drive the terminal."""
    return "".join(ch if ch == "\n" or not (ord(ch) < 32 or 127 <= ord(ch) < 160) else f"\\x{ord(ch):02x}"
                   for ch in text)


_JSON_UNSAFE = re.compile("[\x7f-\x9f\ud800-\udfff]")


def json_printable(text: str) -> str:
    """JSON for a terminal: json.dumps already escapes C0 controls inside strings, but with
    ensure_ascii=False it leaves DEL and the C1 controls (U+009B is a CSI to a terminal) raw;
    those become \\u00XX, which is the same JSON. A lone surrogate (a text that is not valid
    Unicode) becomes \\udXXX too: written raw it cannot be encoded to the terminal at all."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
