"""The details line's words for what kind of token an id is, for each kind of token there is:
base byte, merge, special with a role, whole chunk only, `##` continuation, word start, byte
piece, control and unknown pieces, a Unigram piece's score, and the line drawn from them."""

import base64
import json

import pytest
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

from tokworkbench.app.widgets.token_details import describe_token
from tokworkbench.core import TrainConfig, Trainer, load_corpus, pre_tokenizer, sample_paths
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.formats.presets import PRESETS, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.inspection.tokenkind import token_kind
from tokworkbench.core.inspection.vocab import token_info
from tokworkbench.core.models.roles import with_roles
from tokworkbench.core.registry.load import load_any


@pytest.fixture(scope="module")
def texts():
    return [d.text for d in load_corpus(sample_paths()).documents]


def _kind(model, tid) -> str:
    return token_kind(model, token_info(model, tid))


def test_bpe_tokens_say_base_byte_merge_or_special_with_its_role(texts):
    t = Trainer(texts[:2], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=("<|eot|>", "<pad>")))
    list(t.run(merges=20))
    model = with_roles(t.model(), {"eos": "<|eot|>"})
    assert _kind(model, 65) == "base byte"
    assert _kind(model, 256) == "merge 1"
    assert _kind(model, model.special_ids["<|eot|>"]) == "special token (eos)"
    assert _kind(model, model.special_ids["<pad>"]) == "special token"
    line = describe_token(token_info(model, 65), kind=_kind(model, 65)).plain
    assert line.startswith("id 65  'A'  1 byte: 41") and line.endswith("· base byte")
    merged = describe_token(token_info(model, 256), kind=_kind(model, 256)).plain
    assert "· merge 1: " in merged


def test_a_whole_only_token_says_so(tmp_path):
    raw, _ = preset_ranks(PRESETS["r50k_base"])
    ranks = {t: r for t, r in parse_ranks(raw).items() if r < 1000}
    ranks[" việc".encode()] = len(ranks)
    path = tmp_path / "w.tiktoken"
    path.write_bytes("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()).encode())
    model = load_any(path, "gpt4")
    assert _kind(model, len(ranks) - 1) == "whole chunk only: no merge makes it"


def test_wordpiece_tokens_say_continuation_or_word_start(texts):
    hf = HFTokenizer(models.WordPiece(unk_token="[UNK]"))
    hf.normalizer, hf.pre_tokenizer, hf.decoder = normalizers.BertNormalizer(), pre_tokenizers.BertPreTokenizer(), \
        decoders.WordPiece()
    hf.train_from_iterator(texts, trainers.WordPieceTrainer(vocab_size=800, special_tokens=["[UNK]", "[CLS]"]))
    model = from_hf(json.loads(hf.to_str()))
    cont = next(i for i in range(model.vocab_size) if model.token(i).startswith("##"))
    start = next(i for i in range(2, model.vocab_size) if not model.token(i).startswith("##"))
    assert _kind(model, cont) == "## continuation: only after another token of the word"
    assert _kind(model, start) == "word start"
    assert _kind(model, model.special_ids["[UNK]"]) == "unknown piece: stands for what the vocabulary lacks"


def test_sentencepiece_pieces_say_byte_control_or_unknown(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    spm.SentencePieceTrainer.train(input=str(sample_paths()[0]), model_prefix=str(tmp_path / "m"), model_type="bpe",
                                   vocab_size=500, minloglevel=2, byte_fallback=True)
    sp = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    model = load_any(tmp_path / "m.model")
    assert _kind(model, sp.piece_to_id("<0x41>")) == "byte piece (byte fallback)"
    assert _kind(model, sp.bos_id()) == "control piece: no text becomes it"
    assert _kind(model, sp.unk_id()) == "unknown piece: stands for what the vocabulary lacks"


def test_a_unigram_piece_says_its_score(texts):
    hf = HFTokenizer(models.Unigram())
    hf.normalizer, hf.pre_tokenizer, hf.decoder = normalizers.NFKC(), pre_tokenizers.Metaspace(), decoders.Metaspace()
    hf.train_from_iterator(texts, trainers.UnigramTrainer(vocab_size=1500, unk_token="<unk>",
                                                          special_tokens=["<unk>", "<ctl>"]))
    model = from_hf(json.loads(hf.to_str()))
    assert _kind(model, 5) == f"piece, score {model.pieces[5][1]:.4f}"
    # an HF special token (the vocabulary browser's kind too): no SentencePiece CONTROL type here
    assert _kind(model, model.special_ids["<ctl>"]) == "special token"
