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


def _kinds(folder):
    """A model of each kind that reads characters and has an unknown token: SentencePiece
    Unigram and BPE without byte fallback, an HF WordPiece and a char-level BPE (HF's files)."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    corpus = folder / "c.txt"
    corpus.write_text("hello world this is a test of the tokenizer\n" * 200, encoding="utf-8")
    out = {}
    for kind in ("unigram", "bpe"):
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / kind), vocab_size=23,
                                       model_type=kind, minloglevel=2)
        out[f"sp-{kind}"] = load_any(folder / f"{kind}.model")
    for name, model, trainer in (
        ("hf-wordpiece", models.WordPiece(unk_token="[UNK]"), trainers.WordPieceTrainer(vocab_size=60, special_tokens=["[UNK]"])),
        ("hf-char-bpe", models.BPE(unk_token="[UNK]"), trainers.BpeTrainer(vocab_size=60, special_tokens=["[UNK]"])),
    ):
        tok = Tokenizer(model)
        tok.pre_tokenizer = pre_tokenizers.Whitespace()
        tok.train([str(corpus)], trainer)
        tok.save(str(folder / f"{name}.json"))
        out[name] = load_any(folder / f"{name}.json")
    return out


@pytest.fixture(scope="module")
def char_models(tmp_path_factory):
    return _kinds(tmp_path_factory.mktemp("kinds"))


@pytest.mark.parametrize("name", ["sp-unigram", "sp-bpe", "hf-wordpiece", "hf-char-bpe"])
@pytest.mark.parametrize("call", ["encode", "encode_ordinary", "encode_chunks"])
def test_a_model_of_characters_refuses_it_too_rather_than_call_it_unknown(char_models, name, call):
    """Without byte fallback the surrogate became <unk>, silently, where sentencepiece and HF
    (which cannot take the str at all) refuse the text."""
    model = char_models[name]
    assert getattr(model, call)("hello world")
    with pytest.raises(EncodeError, match=r"lone surrogate \(U\+DFFF\) at offset 3"):
        getattr(model, call)("hel\udfffo")


def test_a_piece_holding_nul_is_refused_as_sentencepiece_refuses_it(tmp_path):
    """sentencepiece will not load it ("piece must not include null character"); it loaded here."""
    from tokworkbench.core.errors import ForeignModelError

    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world this is a test of the tokenizer\n" * 200, encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=23,
                                   model_type="unigram", minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    longest = max((sp.id_to_piece(i) for i in range(sp.get_piece_size())), key=len).encode("utf-8")
    raw = (tmp_path / "m.model").read_bytes()
    assert raw.count(longest) == 1 and len(longest) > 2 and longest[-1] < 0x80
    damaged = tmp_path / "nul.model"
    damaged.write_bytes(raw.replace(longest, longest[:-1] + b"\0"))  # the same length: the protobuf holds
    with pytest.raises(RuntimeError, match="null"):
        spm.SentencePieceProcessor(model_file=str(damaged))
    with pytest.raises(ForeignModelError, match="NUL"):
        load_any(damaged)


def test_the_command_encodes_special_strings_as_ordinary_text_when_asked(tmp_path, capsys):
    """sp.encode reads '<s>' in text as characters; the command refused such text and had no
    way to say 'ordinary text' (--ordinary now), only --allow-special's control id."""
    from tokworkbench.cli import main

    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world this is a test of the tokenizer\n" * 200, encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "m"), vocab_size=23, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    text = "hi <s> there</s>"
    assert main(["encode", "-m", str(tmp_path / "m.model"), "--ordinary", text]) == 0
    assert capsys.readouterr().out.split() == [str(i) for i in sp.encode(text)]
    assert main(["encode", "-m", str(tmp_path / "m.model"), text]) == 1
    assert "--ordinary as ordinary text" in capsys.readouterr().err
