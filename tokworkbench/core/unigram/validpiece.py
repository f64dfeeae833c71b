"""SentencePiece's rule for which strings may become pieces (`TrainerInterface::IsValidSentencePiece`
with its defaults: split_by_unicode_script, split_by_number, split_by_whitespace, no
split_digits, ▁ as a prefix): ▁ only first, and the characters after it keep to one Unicode
script, where

- a character's script is its Unicode Script property (not Script_Extensions), as in
  SentencePiece's table (`unicode_script_map.h`), and Common for a script that table does not
  know (it is Unicode 9's: it has no entry for a later script, and its look-up defaults to Common);
- Hiragana, Katakana and ー (U+30FC) count as Han;
- digits and punctuation are Common like any other character: "1." and "),", are pieces, "a1",
  "s." and "▁(the" are not;
- an Inherited character (a combining mark, ZWJ) takes the script before it, and is no script
  at all first.

The class of each distinct character is computed once (one regex match a character); a piece's
check is then integer comparisons, done for all candidate substrings at once by the seed.
"""

import numpy as np

from tokworkbench.core.text.spscript import ANY, COMMON, INHERITED, META, script_class

__all__ = ["ANY", "COMMON", "INHERITED", "META", "extend", "is_valid_piece", "script_class", "script_classes", "start"]


def script_classes(code_points: np.ndarray) -> np.ndarray:
    """`script_class` of each code point of an array (distinct ones, as the seed gives)."""
    return np.fromiter((script_class(chr(int(c))) for c in code_points), dtype=np.int64, count=len(code_points))


def start(cls: np.ndarray) -> np.ndarray:
    """The running script of one-character pieces of classes `cls` (▁ and Inherited set none)."""
    return np.where((cls == META) | (cls == INHERITED), ANY, cls)


def extend(running: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which pieces stay valid when a character of class `new` is added to pieces whose running
    script is `running`, and their running script after it (SentencePiece's loop, one step)."""
    ok = (new != META) & ((new == INHERITED) | (running == ANY) | (new == running))
    return ok, np.where(new == INHERITED, running, new)


def is_valid_piece(piece: str, max_len: int = 16) -> bool:
    """The rule for one string (the tests' and the docs' reference; the seed uses `extend`)."""
    if not piece or len(piece) > max_len:
        return False
    cls = script_classes(np.array([ord(c) for c in piece]))
    running = start(cls[:1])
    for c in cls[1:]:
        ok, running = extend(running, np.array([c]))
        if not ok[0]:
            return False
    return True
