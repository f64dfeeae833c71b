"""Round trips on arbitrary Unicode and arbitrary bytes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core import EncodeError, TrainConfig, Trainer, load_corpus, pre_tokenizer, sample_paths


@pytest.fixture(scope="module")
def byte_models():
    texts = [d.text for d in load_corpus(sample_paths()).documents]
    models = {}
    for split in ("none", "gpt2", "gpt4", "o200k"):
        t = Trainer(texts if split != "none" else [x[:3000] for x in texts],
                    TrainConfig(pre_tokenizer=pre_tokenizer(split), special_tokens=("<|endoftext|>",)))
        list(t.run(merges=300))
        models[split] = t.model()
    return models


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_byte_units_lossless_on_any_unicode(byte_models, text):
    for tok in byte_models.values():
        assert tok.decode(tok.encode_ordinary(text)) == text


@settings(max_examples=200, deadline=None)
@given(data=st.binary())
def test_any_bytes_decoded_with_replace_round_trip(byte_models, data):
    text = data.decode("utf-8", errors="replace")
    tok = byte_models["gpt4"]
    ids = tok.encode_ordinary(text)
    assert tok.decode(ids) == text
    assert tok.decode_bytes(ids) == text.encode()


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=64))
def test_decode_of_byte_ids_matches_python_replace(byte_models, data):
    tok = byte_models["gpt2"]
    ids = list(data)  # base ids are byte values
    assert tok.decode(ids, errors="replace") == data.decode("utf-8", errors="replace")


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(st.text(min_size=1), min_size=1, max_size=3), merges=st.integers(0, 30))
def test_char_units_lossless_on_their_corpus(texts, merges):
    t = Trainer(texts, TrainConfig(units="char", pre_tokenizer=pre_tokenizer("gpt4")))
    list(t.run(merges=merges))
    tok = t.model()
    for text in texts:
        assert tok.decode(tok.encode(text)) == text


@settings(max_examples=100, deadline=None)
@given(text=st.text(alphabet="abc ", min_size=1), unseen=st.characters(blacklist_characters="abc "))
def test_char_units_unseen_characters(text, unseen):
    plain = Trainer([text], TrainConfig(units="char")).model()
    with pytest.raises(EncodeError, match=f"U\\+{ord(unseen):04X}"):
        plain.encode(text + unseen)
    with_unk = Trainer([text], TrainConfig(units="char", special_tokens=("<unk>",))).model()
    ids = with_unk.encode(text + unseen + text)
    assert with_unk.special_ids["<unk>"] in ids
    assert with_unk.decode(ids) == text + "<unk>" + text


@settings(max_examples=200, deadline=None)
@given(text=st.text())
def test_presets_split_losslessly(text):
    for name in ("gpt2", "gpt4", "o200k"):
        assert "".join(pre_tokenizer(name).split(text)) == text
    assert "".join(pre_tokenizer(r"\d+").split(text)) == text


def test_rank_order_encoding_equals_training_order():
    texts = ["hello hello world, wonderful world 12345 12345"]
    t = Trainer(texts, TrainConfig(pre_tokenizer=pre_tokenizer("gpt2")))
    list(t.run(merges=20))
    tok = t.model()
    encoded = tok.encode(texts[0])
    assert encoded == [i for c in pre_tokenizer("gpt2").split(texts[0]) for i in t.chunk_ids(c)]


@settings(max_examples=150, deadline=None)
@given(text=st.text(min_size=1, max_size=60), lo=st.integers(0, 60), width=st.integers(0, 60))
def test_whole_run_bytes_are_exactly_its_text(byte_models, text, lo, width):
    from tokworkbench.core.inspection.segments import text_spans, whole_run

    tok = byte_models["gpt4"]
    normalized, spans = text_spans(tok, text)
    run = whole_run(spans, lo, lo + width)
    if run:
        data = b"".join(tok.token_bytes(s.token) for s in run)
        assert data == normalized[run[0].start : run[-1].end].encode()
        assert all(lo <= s.start and s.end <= lo + width for s in run)
