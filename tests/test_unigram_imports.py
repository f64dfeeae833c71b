"""Real Unigram models open and give the real libraries' ids: a SentencePiece model trained with
its default special pieces (<unk> 0, <s> 1, </s> 2) and user-defined pieces, and HF Unigram
tokenizers laid out as T5 (<pad> 0, </s> 1, <unk> 2), ALBERT and XLNet lay theirs out, with added
special tokens and a TemplateProcessing post-processor. Exported back to HF, the ids stay."""

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import ExportError, ForeignModelError
from tokworkbench.core.formats.hf_unigram import to_hf, write_hf
from tokworkbench.core.models.roles import encode_document
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.unigram import UnigramModel

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
TRAIN = ["01_en_genesis_kjv.txt", "05_zh_debian_installer.txt", "08_ru_fortunes.txt", "11_el_debian_installer.txt"]
HELD_OUT = ["02_en_devils_dictionary.txt", "06_ja_debian_installer.txt", "09_ar_debian_handbook.txt",
            "04_emoji_symbols_numbers.txt", "10_hi_tokenization_notes.txt", "12_code_sample.py"]


def held_out_lines() -> list[str]:
    lines = []
    for name in HELD_OUT:
        # SentencePiece adds its dummy prefix even before a leading space, HF's Metaspace (and
        # ours) adds none there: lines are compared from their first non-space character
        lines += [line.lstrip(" ") for line in (SAMPLES / name).read_text(encoding="utf-8").splitlines()[:150]]
    return [line for line in lines if line]


# -- SentencePiece -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def sp_model(tmp_path_factory):
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
    out = tmp_path_factory.mktemp("sp")
    spm.SentencePieceTrainer.train(input=",".join(str(SAMPLES / n) for n in TRAIN), model_prefix=str(out / "sp"),
                                   vocab_size=900, model_type="unigram", normalization_rule_name="identity",
                                   remove_extra_whitespaces=False, user_defined_symbols=["<sep>", "ing"],
                                   minloglevel=2)  # SP's default specials: <unk> 0, <s> 1, </s> 2
    return out / "sp.model", spm.SentencePieceProcessor(model_file=str(out / "sp.model"))


def test_sentencepiece_defaults_open_with_their_roles(sp_model):
    model = load_any(sp_model[0])
    assert model.special_ids == {"<unk>": 0, "<s>": 1, "</s>": 2}
    assert model.roles.to_dict() == {"bos": "<s>", "eos": "</s>", "unk": "<unk>"}
    assert [model.pieces[i][0] for i in model.user_defined] == ["<sep>", "ing"]


def test_sentencepiece_ids_on_held_out_multilingual_text(sp_model):
    path, sp = sp_model
    model = load_any(path)
    lines = held_out_lines()
    assert sum(sp.encode(line).count(0) for line in lines) > 0  # unknown characters are exercised
    assert any(4 in sp.encode(line) for line in lines)  # and the user-defined "ing"
    for line in lines:
        assert model.encode(line) == sp.encode(line), line
        assert encode_document(model, line) == sp.encode(line, add_bos=True, add_eos=True), line


PIECES = st.sampled_from(list("abcdeghint ▁\t\n\r\x00\u200b,.!?ТестΑΓ中文あ☃🦜") + ["ing", " the", "<sep>", "  "])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(PIECES, max_size=30).map("".join))
def test_sentencepiece_ids_on_arbitrary_text(sp_model, text):
    """Any text but a leading space or ▁, before which SentencePiece adds its dummy ▁ anyway and
    HF's Metaspace (and ours) adds none."""
    path, sp = sp_model
    text = text.lstrip(" ▁")
    assume(not any(s in text for s in ("<unk>", "<s>", "</s>")))
    assert _loaded(path).encode(text) == sp.encode(text)


def _loaded(path, cache={}):
    if path not in cache:
        cache[path] = load_any(path)
    return cache[path]


def test_sentencepiece_user_defined_piece_is_a_viterbi_bonus_not_a_greedy_match(sp_model):
    """'<sep>' is in no training text: only the bonus makes it one piece, as in SentencePiece."""
    path, sp = sp_model
    model = load_any(path)
    for text in ["a<sep>b", "singing<sep>", "<sep><sep>", "ingest thing"]:
        assert model.encode(text) == sp.encode(text), text


def test_sentencepiece_default_normalizer_opens_and_a_damaged_map_is_refused_in_one_line(tmp_path, capsys):
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
    spm.SentencePieceTrainer.train(input=str(SAMPLES / TRAIN[0]), model_prefix=str(tmp_path / "nfkc"),
                                   vocab_size=200, model_type="unigram", minloglevel=2)
    assert main(["inspect", str(tmp_path / "nfkc.model")]) == 0  # nmt_nfkc: the model's own normalizer
    capsys.readouterr()
    raw = bytearray((tmp_path / "nfkc.model").read_bytes())
    from tokworkbench.core.formats.sentencepiece import _message
    blob = dict(_message(next(v for n, v in _message(bytes(raw)) if n == 3)))[2]
    at = bytes(raw).find(blob)
    raw[at : at + 4] = (len(blob) * 2).to_bytes(4, "little")  # the trie claims more than the blob holds
    (tmp_path / "bad.model").write_bytes(bytes(raw))
    assert main(["inspect", str(tmp_path / "bad.model")]) == 1  # a TokWorkbenchError, as for every bad file
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "precompiled charsmap is damaged" in err


def test_sentencepiece_model_with_user_defined_pieces_does_not_export_to_hf(sp_model, tmp_path):
    with pytest.raises(ExportError, match="user-defined piece"):
        write_hf(load_any(sp_model[0]), tmp_path / "t.json")


def test_inspect_lists_specials_roles_and_user_defined(sp_model, capsys):
    assert main(["inspect", str(sp_model[0])]) == 0
    out = capsys.readouterr().out
    assert "vocabulary   900 = 3 special + " in out
    for line in ["        0  <unk>  (unk)", "        1  <s>  (bos)", "        2  </s>  (eos)", "        4  'ing'"]:
        assert line in out.splitlines()


# -- Hugging Face --------------------------------------------------------------------------------
LAYOUTS = {
    # specials in id order, the single-sequence template, the unknown piece
    "t5": (["<pad>", "</s>", "<unk>"], "$A </s>", "<unk>"),
    "albert": (["<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"], "[CLS] $A [SEP]", "<unk>"),
    "xlnet": (["<unk>", "<s>", "</s>", "<cls>", "<sep>", "<pad>", "<mask>"], "$A <sep> <cls>", "<unk>"),
}
ROLES = {"t5": {"eos": "</s>", "pad": "<pad>", "unk": "<unk>"},
         "albert": {"bos": "[CLS]", "eos": "[SEP]", "pad": "<pad>", "unk": "<unk>"},
         # two tokens after $A are no BOS/EOS pair: no bos or eos role (--add-special adds nothing)
         "xlnet": {"pad": "<pad>", "unk": "<unk>"}}


@pytest.fixture(scope="module", params=sorted(LAYOUTS))
def hf_file(request, tmp_path_factory):
    tokenizers = pytest.importorskip("tokenizers")
    specials, single, unk = LAYOUTS[request.param]
    tok = tokenizers.Tokenizer(tokenizers.models.Unigram())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = tokenizers.decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    trainer = tokenizers.trainers.UnigramTrainer(vocab_size=700, special_tokens=specials, unk_token=unk,
                                                 show_progress=False)
    tok.train([str(SAMPLES / n) for n in TRAIN], trainer)
    named = [t for t in specials if t in single.split()]
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single=single, pair=single + " $B:1", special_tokens=[(t, tok.token_to_id(t)) for t in named])
    path = tmp_path_factory.mktemp("hf") / f"{request.param}.json"
    tok.save(str(path))
    return request.param, path, tokenizers.Tokenizer.from_file(str(path))


def test_hf_layout_opens_with_its_specials_and_roles(hf_file):
    name, path, hf = hf_file
    model = load_any(path)
    assert isinstance(model, UnigramModel)
    specials = LAYOUTS[name][0]
    assert model.special_ids == {t: i for i, t in enumerate(specials)}
    assert model.unk_id == specials.index("<unk>")
    assert model.roles.to_dict() == ROLES[name]


def test_hf_ids_with_and_without_specials(hf_file, tmp_path):
    name, path, hf = hf_file
    model = load_any(path)
    exported = tmp_path / "back.json"
    write_hf(model, exported)
    import tokenizers

    back = tokenizers.Tokenizer.from_file(str(exported))
    lines = held_out_lines()
    assert sum(hf.encode(line, add_special_tokens=False).ids.count(model.unk_id) for line in lines) > 0
    for line in lines:
        plain = hf.encode(line, add_special_tokens=False).ids
        assert model.encode(line) == plain, line
        assert back.encode(line, add_special_tokens=False).ids == plain, line
        if name != "xlnet":  # its template is no BOS + $A + EOS (see ROLES)
            assert encode_document(model, line) == hf.encode(line).ids, line
            assert back.encode(line).ids == hf.encode(line).ids, line


def test_hf_special_strings_in_text_are_hfs_added_tokens(hf_file):
    name, path, hf = hf_file
    model = load_any(path)
    specials = LAYOUTS[name][0]
    text = f"hello {specials[-1]}world {specials[0]}"
    assert model.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids


def test_hf_export_keeps_every_id(hf_file, tmp_path):
    name, path, _ = hf_file
    model = load_any(path)
    doc = to_hf(model)
    assert [t for t, _ in doc["model"]["vocab"]] == [t for t, _ in model.pieces]
    assert doc["model"]["unk_id"] == model.unk_id
    assert {t["content"]: t["id"] for t in doc["added_tokens"]} == model.special_ids
    reread = tmp_path / "again.json"
    reread.write_text(json.dumps(doc), encoding="utf-8")
    assert load_any(reread) == model


def test_cli_encode_add_special_is_hfs(hf_file, capsys):
    """XLNet's template is no BOS + $A + EOS (see ROLES): the command says it adds nothing."""
    name, path, hf = hf_file
    text = "In the beginning, 世界 ☃"
    assert main(["encode", "-m", str(path), "--add-special", text]) == 0
    out = capsys.readouterr()
    expected = hf.encode(text, add_special_tokens=name != "xlnet").ids
    assert out.out.split() == [str(i) for i in expected]
    assert ("--add-special adds nothing" in out.err) == (name == "xlnet")


def test_hf_non_special_added_token_is_refused(hf_file, tmp_path):
    _, path, _ = hf_file
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["added_tokens"][0]["special"] = False
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ForeignModelError, match="is not special"):
        load_any(bad)


def test_replaying_a_sentencepiece_model_takes_its_matched_pieces_only(sp_model):
    from tokworkbench.core.session.session import Session
    from tokworkbench.core.session.settings import Settings

    model = load_any(sp_model[0])
    session = Session.open([str(SAMPLES / "01_en_genesis_kjv.txt")],
                           Settings(kind="unigram", split="metaspace", seed_size=600, target=300))
    session.replay(model, "sp.model")
    pieces = set(session.learner.state.pieces)
    assert not {"<unk>", "<s>", "</s>"} & pieces and {"ing", "▁the"} <= pieces


def test_our_file_keeps_what_a_sentencepiece_model_is(sp_model, tmp_path):
    """Specials, the unknown piece, roles, user-defined pieces and float32 sums survive our file."""
    from tokworkbench.core.registry.modelfile import save

    model = load_any(sp_model[0])
    path = tmp_path / "ours.json"
    save(model, path)
    again = load_any(path)
    assert again == model and again.float32 and again.user_defined == model.user_defined
    line = "━" * 79  # two segmentations tie in real numbers: float32 sums pick SentencePiece's
    assert again.encode(line) == sp_model[1].encode(line)
