"""A lone surrogate is not valid Unicode: SentencePiece refuses such text, and so do we, with
an error that names where it is (Python's own says "position 0" of an internal piece)."""

import pytest
import sentencepiece as spm

from tokworkbench.core.errors import EncodeError
from tokworkbench.core.registry.load import load_any


def trained(folder, kind: str):
    corpus = folder / "c.txt"
    corpus.write_text("hello world this is a test of the tokenizer\n" * 200, encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / "m"), vocab_size=275,
                                   model_type=kind, byte_fallback=True, minloglevel=2)
    return load_any(folder / "m.model")


@pytest.fixture(scope="module", params=["bpe", "unigram"])
def model(request, tmp_path_factory):
    return trained(tmp_path_factory.mktemp(request.param), request.param)


@pytest.mark.parametrize("call", ["encode", "encode_ordinary", "encode_chunks"])
def test_the_error_names_the_surrogates_offset(model, call):
    assert getattr(model, call)("hello world")  # the same calls work on valid text
    with pytest.raises(EncodeError, match=r"lone surrogate \(U\+D800\) at offset 8"):
        getattr(model, call)("hello wo\ud800rld")


def test_a_batch_names_the_text_too(tmp_path):
    model = trained(tmp_path, "bpe")  # SentencePiece BPE encodes a list of lines at once
    with pytest.raises(EncodeError, match=r"at offset 1 of text 1"):
        model.encode_batch(["fine", "a\udfffb"])
