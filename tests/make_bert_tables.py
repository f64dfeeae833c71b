"""Regenerate tokworkbench/core/text/berttables.py from the installed `tokenizers`.

HF's BERT steps read Unicode through Rust crates of their own versions (unicode_categories'
tables for control, punctuation and nonspacing marks; std for whitespace and lowercase; an old
unicode-normalization for NFD), which differ from Python's `unicodedata` on hundreds of code
points. So the tables are measured, one code point at a time, from the library that is the judge:
    python tests/make_bert_tables.py
tests/test_wordpiece.py checks every code point against the installed library again.

Where HF parts from Python's own str.lower and unicodedata depends on Python's Unicode version
(13.0 in 3.10, 14.0 in 3.11, 15.0 in 3.12, 15.1 in 3.13): a table measured on one Python leaves
out the characters a newer one decomposes or reorders and HF does not. So each supported Python
measures with the same `tokenizers`, and the tables hold them all:
    python3.13 tests/make_bert_tables.py --dump 313.json   # likewise 3.10 and 3.12
    python tests/make_bert_tables.py --with 310.json 312.json 313.json
An entry one Python did not need is HF's result there too (these characters are starters to HF).
"""

import argparse
import json
import sys
import unicodedata
from pathlib import Path

import tokenizers
from tokenizers import normalizers, pre_tokenizers

OUT = Path(__file__).resolve().parent.parent / "tokworkbench" / "core" / "text" / "berttables.py"


def ranges(points: list[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for c in points:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [(a, b) for a, b in out]


def measure() -> dict:
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    clean = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False, strip_accents=False,
                                       lowercase=False)
    drop, space = [], []
    for c in points:
        got = clean.normalize_str(chr(c))
        if got == "":
            drop.append(c)
        elif got == " ":
            space.append(c)
        else:
            assert got == chr(c), hex(c)
    split = pre_tokenizers.BertPreTokenizer()
    punct, white = [], []
    for c in points:
        got = [p for p, _ in split.pre_tokenize_str(f"a{chr(c)}a")]
        if got == ["a", "a"]:
            white.append(c)
        elif got == ["a", chr(c), "a"]:
            punct.append(c)
        else:
            assert got == [f"a{chr(c)}a"], hex(c)
    whitespace = pre_tokenizers.Whitespace()  # \w+|[^\w\s]+ in Rust's regex: which characters are \w
    word = []
    for c in points:
        got = [p for p, _ in whitespace.pre_tokenize_str(f"a{chr(c)}a")]
        if got == [f"a{chr(c)}a"]:
            word.append(c)
        else:
            assert got in (["a", "a"], ["a", chr(c), "a"]), (hex(c), got)
    chinese = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=True, strip_accents=False,
                                         lowercase=False)
    ideographs = [c for c in points if chinese.normalize_str(chr(c)) == f" {chr(c)} "]
    lower, strip, nfd = normalizers.Lowercase(), normalizers.StripAccents(), normalizers.NFD()
    lowered = {c: lower.normalize_str(chr(c)) for c in points if lower.normalize_str(chr(c)) != chr(c).lower()}
    marks = [c for c in points if strip.normalize_str(chr(c)) == ""]  # StripAccents: Mn, Mc and Me
    bert_strip = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=True,
                                            lowercase=False)
    nonspacing = [c for c in points if nfd.normalize_str(chr(c)) == chr(c) and bert_strip.normalize_str(chr(c)) == ""]
    forms = {form: getattr(normalizers, form)() for form in ("NFC", "NFD", "NFKC", "NFKD")}
    mapped = {form: {c: hf.normalize_str(chr(c)) for c in points
                     if hf.normalize_str(chr(c)) != unicodedata.normalize(form, chr(c))}
              for form, hf in forms.items()}
    # pairs Python composes and HF's tables do not: their second halves block composition
    unpaired = []
    for c in points:
        parts = unicodedata.decomposition(chr(c)).split()
        if len(parts) == 2 and not parts[0].startswith("<"):
            pair = chr(int(parts[0], 16)) + chr(int(parts[1], 16))
            if unicodedata.normalize("NFC", pair) == chr(c) and forms["NFC"].normalize_str(pair) != chr(c):
                unpaired.append(int(parts[1], 16))
    def moves(text: str) -> bool:
        return nfd.normalize_str(text) != "".join(nfd.normalize_str(ch) for ch in text)

    # marks Python reorders that HF's older tables call starters (combining class 0)
    starters = [c for c in points if unicodedata.combining(chr(c)) and len(nfd.normalize_str(chr(c))) == 1
                and not moves(f"a\u0345{chr(c)}") and not moves(f"a{chr(c)}\u0334")]
    return {"DROP": ranges(drop), "SPACE": ranges(space), "PUNCTUATION": ranges(punct), "WHITESPACE": ranges(white),
            "CHINESE": ranges(ideographs), "WORD": ranges(word),
            "COMBINING_MARKS": ranges(marks),
            "NONSPACING_MARKS": ranges(nonspacing), "LOWERCASE": lowered, "STARTERS": ranges(starters),
            **{form: table for form, table in mapped.items()}, "UNPAIRED": ranges(sorted(set(unpaired)))}


PER_PYTHON = ("LOWERCASE", "STARTERS", "NFC", "NFD", "NFKC", "NFKD", "UNPAIRED")  # differences from Python's own


def merged(tables: dict, others: list[dict]) -> dict:
    """`tables` with the Python-dependent ones joined with other Pythons' (`--dump`) measures."""
    out = dict(tables)
    for other in others:
        assert other["tokenizers"] == tokenizers.__version__, "measure every Python with the same tokenizers"
        for name, value in tables.items():  # HF's own sets do not depend on the Python
            if name not in PER_PYTHON:
                assert [tuple(r) for r in other[name]] == value, name
        for name in PER_PYTHON:
            if isinstance(out[name], dict):
                theirs = {int(k): v for k, v in other[name].items()}
                assert all(out[name].get(k, v) == v for k, v in theirs.items()), name  # HF's answer is one
                out[name] = dict(sorted({**out[name], **theirs}.items()))
            else:
                points = {c for a, b in [*out[name], *map(tuple, other[name])] for c in range(a, b + 1)}
                out[name] = ranges(sorted(points))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path, help="write this Python's measures as JSON, not the tables")
    parser.add_argument("--with", dest="others", type=Path, nargs="*", default=[],
                        help="other Pythons' --dump files, joined into the tables")
    args = parser.parse_args()
    tables = measure()
    versions = [unicodedata.unidata_version]
    if args.dump:
        args.dump.write_text(json.dumps({"tokenizers": tokenizers.__version__, "unicode": versions[0], **tables}))
        return
    others = [json.loads(path.read_text()) for path in args.others]
    tables = merged(tables, others)
    versions = sorted({*versions, *(other["unicode"] for other in others)}, key=lambda v: tuple(map(int, v.split("."))))
    lines = [f'"""HF tokenizers {tokenizers.__version__}\'s view of Unicode for its BERT steps and normal forms,',
             "measured by tests/make_bert_tables.py (generated: do not edit). Ranges are inclusive code point",
             "pairs; LOWERCASE, NFC, NFD, NFKC and NFKD map the code points where HF differs from Python's",
             "str.lower and unicodedata.normalize, in any of these Unicode versions (Python's own: the",
             f"Python {sys.version_info[0]}.{sys.version_info[1]} that wrote this and the --with files): "
             f"{', '.join(versions)};",
             'UNPAIRED are the second halves of the pairs Python composes and HF does not."""', ""]
    for name, value in tables.items():
        if isinstance(value, dict):
            body = "".join(f"    {k:#x}: {v!r},\n" for k, v in value.items())
        else:
            body = "".join(f"    ({a:#x}, {b:#x}),\n" for a, b in value)
        lines.append(f"{name} = {'{' if isinstance(value, dict) else '('}\n{body}{'}' if isinstance(value, dict) else ')'}")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
