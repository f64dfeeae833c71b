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
import regex

META = -1  # ▁: allowed first only
INHERITED = -2  # takes the script before it
ANY = -3  # no script yet (what a piece's running script starts as)
COMMON = 0

# the scripts SentencePiece's table names, less Common and Inherited (Hiragana and Katakana are Han)
_SCRIPTS = """Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah Batak Bengali
Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid Canadian_Aboriginal Carian Caucasian_Albanian
Chakma Cham Cherokee Coptic Cuneiform Cypriot Cyrillic Deseret Devanagari Duployan
Egyptian_Hieroglyphs Elbasan Ethiopic Georgian Glagolitic Gothic Grantha Greek Gujarati Gurmukhi
Han Hangul Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inscriptional_Pahlavi
Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kayah_Li Kharoshthi Khmer Khojki Khudawadi
Lao Latin Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Malayalam Mandaic Manichaean
Marchen Meetei_Mayek Mende_Kikakui Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro
Multani Myanmar Nabataean New_Tai_Lue Newa Nko Ogham Ol_Chiki Old_Hungarian Old_Italic
Old_North_Arabian Old_Permic Old_Persian Old_South_Arabian Old_Turkic Oriya Osage Osmanya
Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic Samaritan
Saurashtra Sharada Shavian Siddham SignWriting Sinhala Sora_Sompeng Sundanese Syloti_Nagri Syriac
Tagalog Tagbanwa Tai_Le Tai_Tham Tai_Viet Takri Tamil Tangut Telugu Thaana Thai Tibetan Tifinagh
Tirhuta Ugaritic Vai Warang_Citi Yi""".split()
_HAN = {"Han", "Hiragana", "Katakana"}
_IDS = {name: COMMON + 1 + k for k, name in enumerate(n for n in _SCRIPTS if n not in _HAN)}
_HAN_ID = len(_IDS) + 1
_PATTERN = regex.compile("|".join([r"(?P<inherited>\p{Script=Inherited})"]
                                  + [rf"(?P<{n}>\p{{Script={n}}})" for n in _SCRIPTS]))


def script_class(ch: str) -> int:
    """One character's class: META, INHERITED, COMMON or a script's id."""
    if ch == "\u2581":
        return META
    if ch == "\u30fc":
        return _HAN_ID
    m = _PATTERN.match(ch)
    if m is None:
        return COMMON
    name = m.lastgroup
    if name == "inherited":
        return INHERITED
    return _HAN_ID if name in _HAN else _IDS[name]


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
