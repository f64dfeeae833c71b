"""The numpy and the compiled pre-tokenizers give exactly `regex.findall`'s chunks for the preset
patterns (gpt2's only compiled: without numba it is `regex` itself)."""

from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from jitpaths import both_paths

from tokworkbench.core.text import fastsplit
from tokworkbench.core.text.patterns import GPT2_PATTERN, GPT4_PATTERN, LLAMA3_PATTERN, O200K_PATTERN, TEKKEN_PATTERN
from tokworkbench.core.text.pretokenize import pre_tokenizer

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
SPLITS = [("gpt4", GPT4_PATTERN, fastsplit.split_gpt4), ("o200k", O200K_PATTERN, fastsplit.split_o200k),
          ("llama3", LLAMA3_PATTERN, fastsplit.split_llama3), ("tekken", TEKKEN_PATTERN, fastsplit.split_tekken),
          ("gpt2", GPT2_PATTERN, fastsplit.split_gpt2)]


jit_path = both_paths()  # every test here runs on the compiled path and on the numpy path


@pytest.fixture(autouse=True)
def always_fast(monkeypatch, jit_path, request):
    """Short texts normally go to regex; here every text takes the fast path."""
    monkeypatch.setattr(fastsplit, "FAST_FROM", 0)
    if jit_path == "numpy" and "gpt2" in request.node.name:
        pytest.skip("gpt2 has no numpy splitter: it is regex")


# Pieces the rules treat differently: letters of each case class and script (Lu Ll Lt Lm Lo),
# marks (Mn Mc Me), numbers (Nd Nl No), every kind of space, \r \n, apostrophes with the
# contraction letters in both cases (and ſ, which (?i) folds to s), punctuation, `/`, emoji
# with variation selectors, ZWJ and skin tones, flags.
ATOMS = [
    "a", "z", "A", "Z", "é", "É", "ǅ", "ʰ", "ß", "ſ", "Ω", "ω", "я", "Я", "中", "文", "한", "あ", "ア",
    "ا", "ب", "ה", "क", "ि", "्", "\u0301", "\u0308", "\u20dd", "\u0903", "ก", "\u0e31",
    "0", "7", "٣", "²", "½", "Ⅻ", "𝟙",
    " ", "  ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u2009", "\u3000", "\x0b", "\x0c", "\x85", "\u2028",
    "'", "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'ve", "'VE", "'m", "'M", "'ll", "'LL", "'lL",
    "'d", "'D", "'ſ", "’", "’s", "'x", "'l",
    ".", ",", "!", "?", "-", "_", "(", ")", "\"", "/", "//", "\\", "#", "@", "...", "—", "«", "»",
    "🙂", "👍", "\U0001F3FD", "\u200d", "\ufe0f", "❤", "🇫🇷", "$", "€", "\x00", "\x01",
]
texts = st.lists(st.sampled_from(ATOMS) | st.text(max_size=3), max_size=60).map("".join)


@pytest.mark.parametrize("name,pattern,split", SPLITS)
@settings(max_examples=1500, deadline=None)
@given(text=texts)
def test_equals_regex_findall_on_mixed_text(name, pattern, split, text):
    assert split(text) == regex.findall(pattern, text)


@pytest.mark.parametrize("name,pattern,split", SPLITS)
@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=80))
def test_equals_regex_findall_on_any_unicode(name, pattern, split, text):
    assert split(text) == regex.findall(pattern, text)


@pytest.mark.parametrize("name,pattern,split", SPLITS)
def test_equals_regex_findall_on_the_sample_texts(name, pattern, split):
    texts = [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.iterdir()) if p.is_file()]
    for text in texts + ["".join(texts)]:
        assert split(text) == regex.findall(pattern, text)


@pytest.mark.parametrize("name,pattern,split", SPLITS)
@pytest.mark.parametrize("text", [
    "", "x", " ", "\n", "don't", "DON'T", "x'll's", "x'll'sa", "'s's's", "x's's'sa", "中Ax", "中AB", "x中AB",
    "xA中B", "HELLOWorld", "helloWorld", "iPhone", "!!\u0301!!", "!\u0301abc", " \u0301abc", ";\n// c",
    "!\n/\n/x", "a  \n  ", "a \n", "a\r ", "\n\n \t", " \n", "x!\n\n  ", "\r\n\r\n", "  \n  \n  ", "1234567", "x\t.foo", " .foo", " 's", "❤\ufe0f ok",
])
def test_edge_cases(name, pattern, split, text):
    assert split(text) == regex.findall(pattern, text)


@pytest.mark.parametrize("preset", ["gpt4", "o200k", "llama3", "tekken", "gpt2"])
def test_the_presets_split_long_text_through_it(preset):
    text = (SAMPLES / "12_code_sample.py").read_text(encoding="utf-8") * 3
    assert pre_tokenizer(preset).split(text) == regex.findall(pre_tokenizer(preset).pattern, text)


def test_a_text_holding_every_separator_candidate_still_splits():
    text = "".join(map(chr, range(0x20))) + "ab cd" * 10
    assert fastsplit.split_gpt4(text) == regex.findall(GPT4_PATTERN, text)
