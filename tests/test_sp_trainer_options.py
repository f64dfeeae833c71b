"""spm_train's split_digits, user_defined_symbols, control_symbols and required_chars in our two
trainers that follow it (SentencePiece BPE, Unigram em), judged by sentencepiece itself:

- the model we train with an option, written as a .model, gives in sentencepiece the ids our
  model gives, on held-out text full of digits and symbols;
- the symbols have spm_train's ids and types, and a control piece never comes from text and
  decodes to nothing;
- the pieces we share with spm_train's model trained with the option are about as many as
  without it (BPE: all of them, the model is spm_train's).
"""

import re
from pathlib import Path

import pytest

from tokworkbench.cli import main
from tokworkbench.core.errors import ExportError, SettingError
from tokworkbench.core.formats.sentencepiece import from_sentencepiece
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.spbpe.learner import SpBpeConfig
from tokworkbench.core.text.spoptions import is_digit
from tokworkbench.core.unigram.config import UnigramConfig

spm = pytest.importorskip("sentencepiece")

DATA = Path(__file__).parent / "data"
BOTCHAN = DATA / "botchan.txt"
SAMPLES = Path(__file__).parent.parent / "sample_texts"
VOCAB = 1000
USER = ("<sep>", "Hotta", "Madonna")
CONTROL = ("<cls>", "<mask>")
REQUIRED = "ЖQ☃"  # Ж and ☃ are in no line of botchan
OPTIONS = {  # name: (spm_train's flags, our Settings' fields)
    "none": ({}, {}),
    "split_digits": ({"split_digits": True}, {"split_digits": True}),
    "user_defined_symbols": ({"user_defined_symbols": list(USER)}, {"user_defined_symbols": USER}),
    "control_symbols": ({"control_symbols": list(CONTROL)}, {"control_symbols": CONTROL}),
    "required_chars": ({"required_chars": REQUIRED}, {"required_chars": REQUIRED}),
}
HELD_OUT = ["In 1906, Hotta paid 3,141,592 yen<sep>and 42 sen.", "Madonna<sep>Hotta 12:30 ２０２６年",
            " <cls> not a control piece in text <mask> ", "Hotta<sep><sep>Madonna 007 0.5% Ж ☃ Q",
            "HottaMadonna1Hotta", "", " ", "a  b\n\nc 99"]


def _held_out() -> list[str]:
    lines = [line for p in sorted(SAMPLES.iterdir()) if p.name[:2].isdigit()
             for line in p.read_text(encoding="utf-8").split("\n")[:40]]
    return HELD_OUT + lines


def _settings(kind: str, fields: dict) -> Settings:
    if kind == "spbpe":
        return Settings(kind="spbpe", units="char", split="metaspace", sp_normalization="identity",
                        character_coverage=1.0, **fields)
    return Settings(kind="unigram", units="char", split="metaspace", algorithm="em", seed_size=1_000_000,
                    normalizer="none", character_coverage=1.0, **fields)


_TRAINED: dict = {}


def _trained(kind: str, option: str, tmp_path_factory):
    """(spm_train's processor, its model read by us, our model, sentencepiece on our .model)."""
    key = (kind, option)
    if key not in _TRAINED:
        folder = tmp_path_factory.mktemp(f"{kind}_{option}")
        flags, fields = OPTIONS[option]
        prefix = folder / "spm"
        corpus = folder / "botchan.txt"  # its lines end in \n alone, for both (the file's end in \r\n)
        corpus.write_text(BOTCHAN.read_text(encoding="utf-8"), encoding="utf-8", newline="\n")
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(prefix), vocab_size=VOCAB,
                                       model_type="bpe" if kind == "spbpe" else "unigram", minloglevel=2,
                                       normalization_rule_name="identity", character_coverage=1.0, **flags)
        ref = spm.SentencePieceProcessor(model_file=f"{prefix}.model")
        learner = _settings(kind, fields).learner([BOTCHAN.read_text(encoding="utf-8")])
        # Unigram spells the line break spm_train never sees: it takes a place of its own
        list(learner.run(vocab_size=VOCAB + (kind != "spbpe" and "\n" in learner.state.pieces)))
        model = learner.model()
        export(model, "sentencepiece", folder / "ours.model")
        ours_sp = spm.SentencePieceProcessor(model_file=str(folder / "ours.model"))
        _TRAINED[key] = (ref, from_sentencepiece(Path(f"{prefix}.model").read_bytes()), model, ours_sp)
    return _TRAINED[key]


def _share(ref, model) -> tuple[int, int]:
    """spm_train's normal pieces that our model has too, and how many it has."""
    theirs = {ref.id_to_piece(i) for i in range(ref.get_piece_size())
              if not (ref.is_control(i) or ref.is_unknown(i) or ref.id_to_piece(i) in USER)}
    ours = {model.token(i) for i in range(model.vocab_size)}
    return len(theirs & ours), len(theirs)


KINDS = ("spbpe", "unigram")
WITH = [o for o in OPTIONS if o != "none"]


@pytest.mark.parametrize("option", WITH)
@pytest.mark.parametrize("kind", KINDS)
def test_sentencepiece_on_our_model_file_gives_our_ids(kind, option, tmp_path_factory):
    ref, _, model, ours_sp = _trained(kind, option, tmp_path_factory)
    lines = _held_out()
    ids = [ours_sp.encode(line) for line in lines]
    assert sum(map(len, ids)) > 5_000
    assert [model.encode_ordinary(line) for line in lines] == ids
    assert [model.decode(i) for i in ids[:40]] == [ours_sp.decode(i) for i in ids[:40]]
    if kind == "spbpe":  # the model is spm_train's: its ids too
        assert [ref.encode(line) for line in lines] == ids


@pytest.mark.parametrize("kind", KINDS)
def test_digits_are_read_one_by_one(kind, tmp_path_factory):
    ref, _, model, ours_sp = _trained(kind, "split_digits", tmp_path_factory)
    for pieces in ([model.token(i) for i in range(model.vocab_size)],
                   [ref.id_to_piece(i) for i in range(ref.get_piece_size())]):
        assert not [p for p in pieces if len(p) > 1 and any(map(is_digit, p))]
    _, _, plain, _ = _trained(kind, "none", tmp_path_factory)
    assert [p for p in (plain.token(i) for i in range(plain.vocab_size)) if len(p) > 1 and any(map(is_digit, p))]
    text = "In 1906, 3,141,592 yen"
    digit_pieces = [ours_sp.id_to_piece(i) for i in ours_sp.encode(text) if any(map(is_digit, ours_sp.id_to_piece(i)))]
    assert digit_pieces == list("19063141592")


@pytest.mark.parametrize("option", ["user_defined_symbols", "control_symbols"])
@pytest.mark.parametrize("kind", KINDS)
def test_symbols_have_spm_trains_ids_and_types(kind, option, tmp_path_factory):
    ref, ref_model, model, ours_sp = _trained(kind, option, tmp_path_factory)
    symbols = USER if option == "user_defined_symbols" else CONTROL
    ids = [model.token(i) for i in range(model.vocab_size)]
    for s in symbols:
        tid = ref.piece_to_id(s)
        assert tid > 2 and ids.index(s) == tid == ours_sp.piece_to_id(s)
        assert ours_sp.is_control(tid) == ref.is_control(tid) == (option == "control_symbols")
    written = from_sentencepiece(export_bytes(model, tmp_path_factory))
    user = written.user_defined if kind == "spbpe" else tuple(written.pieces[i][0] for i in written.user_defined)
    assert user == (USER if option == "user_defined_symbols" else ())
    assert [t for t, i in written.special_ids.items() if i > 2] == list(CONTROL if option == "control_symbols"
                                                                       else ())
    if option == "user_defined_symbols":
        for s in symbols:  # matched whole, in text, in both
            assert ours_sp.encode(f"x {s} y{s}z").count(ref.piece_to_id(s)) == 2
            assert model.encode_ordinary(f"x {s} y{s}z").count(ref.piece_to_id(s)) == 2
    else:
        control = {ref.piece_to_id(s) for s in symbols}
        for line in _held_out():
            assert not control & set(model.encode_ordinary(line))
        assert ours_sp.decode([5, *control, 6]) == ours_sp.decode([5, 6]) == model.decode([5, *control, 6])


def export_bytes(model, tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("again") / "m.model"
    export(model, "sentencepiece", out)
    return out.read_bytes()


@pytest.mark.parametrize("kind", KINDS)
def test_required_chars_are_kept(kind, tmp_path_factory):
    ref, _, model, ours_sp = _trained(kind, "required_chars", tmp_path_factory)
    ours = [model.token(i) for i in range(model.vocab_size)]
    assert "Ж" not in BOTCHAN.read_text(encoding="utf-8")
    for c in REQUIRED:
        assert c in ours and ref.piece_to_id(c) != ref.unk_id()
        assert ours_sp.unk_id() not in ours_sp.encode(f"a{c}") and model.unk_id not in model.encode_ordinary(c)
    _, _, plain, _ = _trained(kind, "none", tmp_path_factory)
    assert "Ж" not in {plain.token(i) for i in range(plain.vocab_size)}


@pytest.mark.parametrize("option", WITH)
@pytest.mark.parametrize("kind", KINDS)
def test_pieces_shared_with_spm_train_are_as_many_as_without_the_option(kind, option, tmp_path_factory, capsys):
    ref0, _, plain, _ = _trained(kind, "none", tmp_path_factory)
    ref, ref_model, model, _ = _trained(kind, option, tmp_path_factory)
    base, base_of = _share(ref0, plain)
    shared, of = _share(ref, model)
    with capsys.disabled():
        print(f"\n{kind} {option}: {shared}/{of} pieces of spm_train's (without the option {base}/{base_of})")
    if kind == "spbpe":
        assert model == ref_model  # spm_train's model: pieces, scores, types, normalizer
    assert shared / of >= base / base_of - 0.03 and shared / of >= 0.95


def test_the_command_line_flags_reach_the_model_and_its_file(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert main(["train", str(BOTCHAN), "--kind", "spbpe", "--vocab-size", "600", "--sp-normalization", "identity",
                 "--split-digits", "--user-defined-symbols", "Hotta,<sep>", "--control-symbols", "<cls>",
                 "--required-chars", "Ж", "-o", str(out)]) == 0
    model = load_any(out)
    assert [model.token(i) for i in range(6)] == ["<unk>", "<s>", "</s>", "<cls>", "Hotta", "<sep>"]
    assert model.user_defined == ("Hotta", "<sep>") and "<cls>" in model.special_ids
    assert "Ж" in model.pieces and not [p for p in model.pieces if len(p) > 1 and any(map(is_digit, p))]
    out2 = tmp_path / "u.json"
    assert main(["train", str(BOTCHAN), "--kind", "unigram", "--algorithm", "em", "--split", "metaspace",
                 "--vocab-size", "600", "--user-defined-symbols", "Hotta", "--control-symbols", "<cls>",
                 "--split-digits", "--required-chars", "Ж", "-o", str(out2)]) == 0
    uni = load_any(out2)
    assert [uni.token(i) for i in range(5)] == ["<unk>", "<s>", "</s>", "<cls>", "Hotta"]
    assert uni.user_defined == (4,) and uni.specials == (0, 1, 2, 3)
    assert uni.encode_ordinary("Hotta said<cls>")[1:2] == [4] and 3 not in uni.encode_ordinary("Hotta said<cls>")
    assert "Ж" in {uni.token(i) for i in range(uni.vocab_size)}
    capsys.readouterr()
    assert main(["train", str(BOTCHAN), "--kind", "spbpe", "--user-defined-symbols", "a,,b", "--vocab-size", "600",
                 "-o", str(out)]) == 1
    assert capsys.readouterr().err.strip() == ("tokworkbench: error: --user-defined-symbols ('a', '', 'b') holds "
                                               "an empty symbol")


@pytest.mark.parametrize("kind", KINDS)
def test_hf_export_carries_control_symbols_and_refuses_user_ones(kind, tmp_path_factory):
    tokenizers = pytest.importorskip("tokenizers")
    _, _, model, ours_sp = _trained(kind, "control_symbols", tmp_path_factory)
    folder = tmp_path_factory.mktemp("hf")
    export(model, "hf", folder / "t.json")
    hf = tokenizers.Tokenizer.from_file(str(folder / "t.json"))
    # HF matches its added tokens in text, as our encode with specials allowed does; sp.encode never
    lines = [line for line in _held_out() if not any(s in line for s in CONTROL)]
    assert [hf.encode(line, add_special_tokens=False).ids for line in lines] == [ours_sp.encode(line) for line in lines]
    assert model.special_ids["<cls>"] in hf.encode("a <cls> b", add_special_tokens=False).ids
    _, _, user_model, _ = _trained(kind, "user_defined_symbols", tmp_path_factory)
    with pytest.raises(ExportError, match="(?i)user"):
        export(user_model, "hf", folder / "u.json")


@pytest.mark.parametrize("config", [SpBpeConfig, lambda **kw: UnigramConfig(algorithm="em", **kw)])
def test_nonsense_options_are_refused_in_one_line(config):
    cases = [({"user_defined_symbols": ("a", "a")}, "user defined symbols 'a' is given twice"),
             ({"user_defined_symbols": ("<unk>",)}, "is already one of the model's own pieces"),
             ({"control_symbols": ("<s>",)}, "is already one of the model's own pieces"),
             ({"control_symbols": ("x",), "user_defined_symbols": ("x",)}, "given twice"),
             ({"user_defined_symbols": ("",)}, "empty symbol"),
             ({"control_symbols": ("a b",)}, "whitespace"),
             ({"user_defined_symbols": ["a"]}, "must be a list of texts"),
             ({"required_chars": "ab c"}, "whitespace"),
             ({"required_chars": "\u2585"}, "U+2585"),
             ({"split_digits": 1}, "must be true or false")]
    for fields, problem in cases:
        with pytest.raises(SettingError, match=re.escape(problem)) as caught:
            config(**fields)
        assert "\n" not in str(caught.value)
    config(split_digits=True, user_defined_symbols=("a",), control_symbols=("b",), required_chars="xyz")


def test_options_that_only_em_or_a_byte_fallback_free_model_takes():
    with pytest.raises(SettingError, match="needs algorithm em"):
        UnigramConfig(algorithm="course", split_digits=True)
    with pytest.raises(SettingError, match="holds ▁"):
        UnigramConfig(algorithm="em", user_defined_symbols=("▁x",))
    with pytest.raises(SettingError, match="byte pieces"):
        SpBpeConfig(byte_fallback=True, control_symbols=("<0x41>",))
    SpBpeConfig(control_symbols=("<0x41>",))
