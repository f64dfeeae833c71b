"""Our NFC/NFD/NFKC/NFKD are Hugging Face's (core/text/hfnormal.py), judged by `tokenizers`
itself: on every code point alone, and on sequences built from the characters where the two
Unicode versions part, with the marks, Hangul and letters they meet."""

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import normalizers

from tokworkbench.core.text import berttables, hfnormal
from tokworkbench.core.text.normalize import normalize

FORMS = ("NFC", "NFD", "NFKC", "NFKD")
EVERY = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF)


@pytest.mark.parametrize("form", FORMS)
def test_every_code_point_alone_is_hfs(form):
    hf = getattr(normalizers, form)()
    assert [hfnormal.normalize(form, c) for c in EVERY] == [hf.normalize_str(c) for c in EVERY]


@pytest.mark.parametrize("form", FORMS)
def test_every_code_point_in_one_text_is_hfs(form):
    assert hfnormal.normalize(form, EVERY) == getattr(normalizers, form)().normalize_str(EVERY)


def _points(ranges):
    return [chr(c) for a, b in ranges for c in range(a, b + 1)]


TRICKY = sorted({chr(c) for table in (berttables.NFD, berttables.NFKC, berttables.NFKD) for c in table}
                | set(_points(berttables.STARTERS)) | set(_points(berttables.UNPAIRED))
                | {"\U00011935", "\U00011930", "a", "e", "A", "\u0301", "\u0308", "\u0323", "\u0345", "\u0334",
                   "\u05b0", "\u1100", "\u1161", "\u11a8", "\uac00", "\u212b", "\ufb01", "\u00c5", " ", "1"})


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TRICKY), max_size=12), st.sampled_from(FORMS))
def test_sequences_where_the_versions_part_are_hfs(chars, form):
    text = "".join(chars)
    assert hfnormal.normalize(form, text) == getattr(normalizers, form)().normalize_str(text)


def test_our_own_nfkc_is_hfs_so_an_exported_model_keeps_its_ids():
    reiwa = "\u32ff"  # ㋿: Unicode 12.1 gave it a compatibility mapping that HF's tables predate
    assert unicodedata.normalize("NFKC", reiwa) == "令和"
    assert normalize(reiwa, "nfkc") == reiwa == normalizers.NFKC().normalize_str(reiwa)
    assert normalize("Å ﬁ", "nfkc") == "Å fi"
