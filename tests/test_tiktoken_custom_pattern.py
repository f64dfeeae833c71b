"""A ranks file reads text as tiktoken does. With a custom pattern it encodes only what the pattern
matches; the text between is dropped (tiktoken's findall). It was kept, and got ids for ", "
and "! " that tiktoken never gives."""

import base64

import pytest
import tiktoken

from tokworkbench.core import TrainConfig, Trainer, load_corpus, pre_tokenizer, sample_paths
from tokworkbench.core.errors import ExportError
from tokworkbench.core.formats import hf_bpe
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.load import load_any

TEXTS = ["hello, world! the end", "  spaces   and\ttabs\n", "日本語 and ascii!?", "", "!!!", "word"]
PATTERNS = [r"\w+", r"[a-z]+|\d", r"\p{L}+"]


@pytest.fixture(scope="module")
def ranks_file(tmp_path_factory):
    texts = [d.text for d in load_corpus(sample_paths()).documents]
    t = Trainer(texts, TrainConfig(units="byte", pre_tokenizer=pre_tokenizer("gpt4")))
    list(t.run(vocab_size=600))
    tokens = list(t.model().ranked_tokens)
    path = tmp_path_factory.mktemp("ranks") / "m.tiktoken"
    path.write_text("".join(f"{base64.b64encode(tok).decode()} {r}\n" for r, tok in enumerate(tokens)))
    return path, {tok: r for r, tok in enumerate(tokens)}


@pytest.mark.parametrize("pattern", PATTERNS)
def test_the_ids_are_tiktokens_and_the_unmatched_text_has_none(ranks_file, pattern):
    path, ranks = ranks_file
    ours = load_any(path, f"regex:{pattern}")
    theirs = tiktoken.Encoding("t", pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    for text in TEXTS:
        assert ours.encode_ordinary(text) == theirs.encode_ordinary(text), text
        chunks = ours.encode_chunks(text)
        assert "".join(c for c, _ in chunks) == text  # the views still see every char
        assert [i for _, ids in chunks for i in ids] == theirs.encode_ordinary(text)


def test_such_a_model_keeps_the_rule_in_its_file_and_is_not_exported_to_hf(ranks_file, tmp_path):
    path, _ = ranks_file
    ours = load_any(path, r"regex:\w+")
    modelfile.save(ours, tmp_path / "m.json")
    again = load_any(tmp_path / "m.json")
    assert again.tiktoken_text and again.encode_ordinary("a, b") == ours.encode_ordinary("a, b")
    with pytest.raises(ExportError, match="drops the text its pattern does not match"):
        hf_bpe.check_hf(ours)
    assert not load_any(path, "gpt4").drops_unmatched  # a preset matches every character


@pytest.mark.parametrize("text", ["ab\ud800cd", "x\ud83d\ude00y", "\udfff", "a\udc80\ud800b hello", "plain"])
def test_lone_surrogates_are_read_as_tiktoken_reads_them(ranks_file, text):
    """tiktoken sends a str Rust refuses through UTF-16 (a pair is its character, a lone one
    U+FFFD); a ranks model refused it, where tiktoken gives ids. Other models still refuse it."""
    path, ranks = ranks_file
    ours = load_any(path, "gpt4")
    theirs = tiktoken.Encoding("t", pat_str=ours.pre_tokenizer.pattern, mergeable_ranks=ranks, special_tokens={})
    assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)
    assert ours.encode(text) == theirs.encode(text)
    assert [i for _, ids in ours.encode_chunks(text) for i in ids] == theirs.encode_ordinary(text)
