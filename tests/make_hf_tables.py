"""Regenerate tokworkbench/core/text/hftables.py from the installed `tokenizers`.

HF's Digits pre-tokenizer splits on Rust's `char::is_numeric`, whose Unicode is the Rust
standard library's, not the regex module's (\\p{N} there is newer: Cuneiform numbers HF does
not know); its regexes run in Oniguruma, whose \\p{L}, \\p{N}, \\d, \\w... are older still. So
the classes are measured from the library that is the judge:
    python tests/make_hf_tables.py
tests/test_hf_pretokenizers.py checks every code point against the installed library again.
"""

from pathlib import Path

import tokenizers
from tokenizers import Regex, pre_tokenizers

OUT = Path(__file__).resolve().parent.parent / "tokworkbench" / "core" / "text" / "hftables.py"


def ranges(points: list[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for c in points:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [(a, b) for a, b in out]


def numeric_points() -> list[int]:
    """Every code point Digits(individual_digits=True) isolates, each tried between two 'a's."""
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and c != ord("a")]
    text = "a" + "a".join(map(chr, points)) + "a"
    pieces = [p for p, _ in pre_tokenizers.Digits(individual_digits=True).pre_tokenize_str(text)]
    return sorted(ord(p) for p in pieces if len(p) == 1 and p != "a")


# the property classes Hub patterns use, as Oniguruma (inside tokenizers) reads them
ONIG_CLASSES = ("L", "Lu", "Ll", "Lt", "Lm", "Lo", "M", "Mn", "Mc", "Me", "N", "Nd", "Nl", "No",
                "S", "Sm", "Sc", "Sk", "So", "Z", "Zs", "Zl", "Zp", "Cc", "Cf")
ESCAPES = {"d": r"\d", "w": r"\w"}


def onig_points(cls: str) -> list[int]:
    """Every code point a Split on `cls` isolates, each tried between two '#'s."""
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF and c != ord("#")]
    text = "#" + "#".join(map(chr, points)) + "#"
    pieces = [p for p, _ in pre_tokenizers.Split(Regex(cls), "isolated").pre_tokenize_str(text)]
    return sorted(ord(p) for p in pieces if len(p) == 1 and p != "#")


def main() -> None:
    lines = [f'"""Unicode as the installed tokenizers {tokenizers.__version__} reads it (tests/make_hf_tables.py)."""',
             "", "NUMERIC = ("]
    lines += [f"    ({a:#x}, {b:#x})," for a, b in ranges(numeric_points())]
    lines += [")", "", "# Oniguruma's classes: property name (or d, w for \\d, \\w) -> code point ranges", "ONIG = {"]
    for name, cls in [(n, f"\\p{{{n}}}") for n in ONIG_CLASSES] + list(ESCAPES.items()):
        found = [f"({a:#x}, {b:#x})," for a, b in ranges(onig_points(cls))]
        lines.append(f"    {name!r}: (")
        lines += ["        " + " ".join(found[k:k + 5]) for k in range(0, len(found), 5)]
        lines.append("    ),")
    lines += ["}", ""]
    OUT.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
