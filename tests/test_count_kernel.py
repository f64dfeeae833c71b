"""Compiled chunk counting (core/text/countkernel.py) gives `Counter(findall(text))` exactly:
the same chunks, counts and order of first appearance, on hypothesis text and on real text, and
training counts (count_files) come out the same with it and without it."""

from collections import Counter
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fastsplit import ATOMS

from tokworkbench.core import jit
from tokworkbench.core.text import fastsplit
from tokworkbench.core.text.blocks import count_files
from tokworkbench.core.text.patterns import PRESETS
from tokworkbench.core.text.pretokenize import parse_split

pytestmark = pytest.mark.skipif(not jit.available(), reason="numba is not installed here")

ROOT = Path(__file__).resolve().parents[1]
NAMES = ["gpt4", "o200k", "llama3", "tekken", "gpt2"]
# repeats are what the table has to find again; long runs of one atom give equal long chunks
texts = st.lists(st.sampled_from(ATOMS) | st.text(max_size=3), max_size=80).map(lambda parts: "".join(parts) * 3)


def findall_counts(name: str, text: str) -> Counter:
    return Counter(regex.findall(PRESETS[name], text))


@pytest.fixture(autouse=True, params=["compiled splitter", "regex for short texts"])
def every_length(monkeypatch, request):
    """Long texts take the compiled splitter; short ones regex's chunks, tallied alike."""
    if request.param == "compiled splitter":
        monkeypatch.setattr(fastsplit, "FAST_FROM", 0)
    else:
        monkeypatch.setattr(fastsplit, "FAST_FROM", 1 << 30)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150, deadline=None)
@given(text=texts)
def test_counts_are_findalls_in_its_order(name, text):
    counted = fastsplit.chunk_counts(name, text)
    assert list(counted.items()) == list(findall_counts(name, text).items())


@pytest.mark.parametrize("name", NAMES)
def test_real_text_with_its_table_grown_many_times(name):
    """Thousands of distinct chunks make the table grow (it starts at 4,096 slots) and reorder
    every chunk: the order of first appearance must survive each growth."""
    text = "".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "sample_texts").glob("*.txt")))
    text += (ROOT / "tests" / "data" / "botchan.txt").read_text(encoding="utf-8")
    expected = findall_counts(name, text)
    assert len(expected) > 4096
    assert list(fastsplit.chunk_counts(name, text).items()) == list(expected.items())


def test_tallies_across_texts_are_one_counter_of_all():
    """One tally over many blocks (as a counting worker keeps it): the chunks of a later text
    are found in the arena of earlier ones, and the order stays that of first appearance."""
    text = (ROOT / "tests" / "data" / "botchan.txt").read_text(encoding="utf-8")
    parts = [text[i:i + 5000] for i in range(0, 60000, 5000)]
    tally = fastsplit.ChunkTally("gpt4")
    expected = Counter()
    for part in parts:
        tally.add(part)
        expected.update(findall_counts("gpt4", part))
    assert list(tally.counter().items()) == list(expected.items())


def test_training_counts_are_the_same_with_and_without_it(tmp_path, monkeypatch):
    path = tmp_path / "corpus.txt"
    path.write_text((ROOT / "tests" / "data" / "botchan.txt").read_text(encoding="utf-8") * 2, encoding="utf-8")
    pre = parse_split("gpt4")
    compiled = count_files([path], "none", pre, workers=1, block=1 << 18)
    monkeypatch.setenv(jit.OFF_VARIABLE, "1")
    plain = count_files([path], "none", pre, workers=1, block=1 << 18)
    assert compiled.chunks == plain.chunks
    assert compiled.counts.tolist() == plain.counts.tolist()
    assert (compiled.chars, compiled.bytes) == (plain.chars, plain.bytes)
