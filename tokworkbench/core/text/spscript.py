"""SentencePiece's script classes (`unicode_script_map.h` as its trainers use them): what keeps a
piece to one Unicode script. Both SentencePiece trainers ask it (unigram/validpiece.py for the
seed, spbpe/training.py for a merge), so it lives here, below the kinds.

- a character's script is its Unicode Script property (not Script_Extensions), and Common for a
  script SentencePiece's Unicode 9 table does not know (its look-up defaults to Common);
- Hiragana, Katakana and ー (U+30FC) count as Han;
- an Inherited character takes the script before it (INHERITED), ▁ is META.
"""

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


