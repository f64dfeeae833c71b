"""The kind registry: each kind's record is complete, its model file round-trips through the
one envelope, and what only some kinds can do is a capability the others do not claim."""

import json

import pytest

from tokworkbench.core.bpe.trainer import TrainConfig, Trainer
from tokworkbench.core.errors import ExportError, ModelFileError, SettingError, TrainingError
from tokworkbench.core.files.envelope import FORMAT, VERSION
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.models.protocol import (
    CharLengths,
    Continuations,
    HasLattice,
    Learner,
    MergeRanked,
    Model,
    OwnDisplay,
    Replaying,
    Scored,
    Transferable,
)
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import FORMATS, check
from tokworkbench.core.registry.kinds import KINDS, TRAINABLE, kind_named, kind_of, trainable_kind
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.spbpe.learner import SpBpeLearner
from tokworkbench.core.spbpe.model import CONTROL, NORMAL, UNKNOWN, SpBpeModel
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.text.spnormalize import SpNormalizer
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner
from tokworkbench.core.wordpiece.model import WordPieceModel

TEXT = ["low lower lowest newer wider " * 5, "the quick brown fox jumps over the lazy dog " * 4]


@pytest.fixture(scope="module")
def models():
    bpe = Trainer(TEXT, TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")))
    for _ in bpe.run(merges=20):
        pass
    unigram = UnigramLearner(TEXT, UnigramConfig(pre_tokenizer=pre_tokenizer("metaspace"), seed_size=80))
    for _ in unigram.run(vocab_size=50):
        pass
    fixed = FixedVocab(("<unk>", "low", "er", "l", "o", "w", " "), Roles(unk="<unk>"))
    spbpe = SpBpeModel(("<unk>", "<s>", "l", "o", "w", "▁", "e", "r", "lo", "low", "▁low", "er"),
                       (0.0, 0.0, -5.0, -5.0, -5.0, -5.0, -5.0, -5.0, -1.0, -2.0, -3.0, -1.5),
                       (UNKNOWN, CONTROL) + (NORMAL,) * 10, SpNormalizer(None, "identity", False),
                       roles=Roles(bos="<s>", unk="<unk>"))
    wordpiece = WordPieceModel(("[UNK]", "[CLS]", "[SEP]", "the", "low", "##er", "##est", "new", "fox", "f", "##o",
                                "##x"), roles=Roles(bos="[CLS]", eos="[SEP]", unk="[UNK]"), specials=(1, 2))
    return {"bpe": (bpe, bpe.model()), "unigram": (unigram, unigram.model()), "fixed": (None, fixed),
            "spbpe": (SpBpeLearner(TEXT), spbpe), "wordpiece": (None, wordpiece)}


def test_every_kind_has_a_complete_record(models):
    assert set(models) == set(KINDS)
    for name, kind in KINDS.items():
        assert kind.name == name and kind.title and kind.noun
        learner, model = models[name]
        assert kind_of(model) is kind and isinstance(model, Model)
        assert set(kind.exports) <= set(FORMATS)
        assert (kind.check_export is None) == (kind.write_export is None) == (not kind.exports)
        if kind.trainable:
            assert name in TRAINABLE and kind.step and kind.config and kind.history_csv and kind.replay
            assert kind_of(learner) is kind and isinstance(learner, Learner)
            assert kind.count(1) == f"1 {kind.step}" and kind.count(2) == f"2 {kind.steps}"
        else:
            assert name not in TRAINABLE and not kind.step and kind.history_csv is None


def test_every_kind_round_trips_through_the_one_envelope(models, tmp_path):
    for name, (_, model) in models.items():
        path = modelfile.save(model, tmp_path / f"{name}.json")
        raw = path.read_bytes()
        doc = json.loads(raw)
        assert (doc["format"], doc["version"], doc["model"]) == (FORMAT, VERSION, name)
        assert raw.endswith(b"\n") and raw.count(b"\n") == 1  # every kind compact, one line
        again = modelfile.load(path)
        assert kind_of(again) is KINDS[name]
        text = "the lower newest fox"
        assert again.encode(text) == model.encode(text)


def test_a_file_of_an_unknown_kind_or_version_is_refused_naming_it(tmp_path):
    with pytest.raises(ModelFileError, match=r"unknown model kind 'wordlevel'; this tool has bpe, unigram, fixed, "
                                             "spbpe, wordpiece"):
        modelfile.from_json({"format": FORMAT, "version": VERSION, "model": "wordlevel"})
    with pytest.raises(ModelFileError, match="model file version 9 is not supported"):
        modelfile.from_json({"format": FORMAT, "version": 9, "model": "bpe"})


def test_capabilities_are_claimed_by_the_kinds_that_have_them(models):
    bpe_learner, bpe = models["bpe"]
    unigram_learner, unigram = models["unigram"]
    fixed, wordpiece = models["fixed"][1], models["wordpiece"][1]
    assert isinstance(bpe, MergeRanked) and isinstance(bpe, CharLengths)
    assert not isinstance(bpe, (Scored, HasLattice, OwnDisplay, Continuations))
    assert isinstance(unigram, Scored) and isinstance(unigram, HasLattice) and isinstance(unigram, OwnDisplay)
    assert isinstance(unigram, CharLengths) and not isinstance(unigram, MergeRanked)
    assert not isinstance(fixed, (MergeRanked, Scored, HasLattice, OwnDisplay, Continuations))
    assert not isinstance(unigram, Continuations)
    assert isinstance(wordpiece, Continuations) and isinstance(wordpiece, CharLengths)
    assert isinstance(wordpiece, OwnDisplay) and not isinstance(wordpiece, (MergeRanked, Scored, HasLattice))
    assert [wordpiece.is_continuation(i) for i in (0, 3, 5)] == [False, False, True]
    spbpe = models["spbpe"][1]
    assert isinstance(spbpe, OwnDisplay) and isinstance(spbpe, CharLengths)
    assert not isinstance(spbpe, (MergeRanked, Scored, HasLattice))
    assert isinstance(bpe_learner, Replaying) and isinstance(bpe_learner, Transferable)
    assert not isinstance(unigram_learner, Replaying)


def test_exports_follow_the_record(models):
    unigram, fixed = models["unigram"][1], models["fixed"][1]
    with pytest.raises(ExportError, match="tiktoken cannot hold this Unigram model: a Unigram model has scored "
                                          r"pieces and no merges \(export it to hf, sentencepiece\)"):
        check(unigram, "tiktoken")
    with pytest.raises(ExportError, match="keep it as a tokworkbench model file"):
        check(fixed, "hf")
    wordpiece = models["wordpiece"][1]
    assert check(wordpiece, "hf") == []
    with pytest.raises(ExportError, match=r"tiktoken cannot hold this WordPiece model: .* \(export it to hf, vocab.txt\)"):
        check(wordpiece, "tiktoken")
    with pytest.raises(ExportError, match="unknown export format 'onnx'"):
        check(models["bpe"][1], "onnx")


def test_settings_go_through_the_record():
    assert Settings().config().__class__ is TrainConfig
    unigram = Settings(kind="unigram", split="metaspace")
    assert isinstance(unigram.config(), UnigramConfig)
    assert unigram.role_tokens == ("<unk>",) and Settings(special_tokens=("<s>",)).role_tokens == ("<s>",)
    with pytest.raises(TrainingError, match="unknown model kind 'wordlevel'"):
        Settings(kind="wordlevel").config()
    with pytest.raises(TrainingError, match="a WordPiece model is not trained; choose bpe or unigram"):
        trainable_kind("wordpiece")
    with pytest.raises(TrainingError, match="a fixed vocabulary is not trained; choose bpe or unigram"):
        trainable_kind("fixed")
    with pytest.raises(TrainingError, match="special tokens such as '<s>' need BPE"):
        Settings(kind="unigram", special_tokens=("<s>",)).config()
    assert kind_named("bpe").options == ("units", "tie_break")


def test_a_setting_error_names_the_setting_and_can_be_worded_for_a_flag():
    with pytest.raises(SettingError) as caught:
        Settings(kind="unigram", split="metaspace", prune_fraction=1.5).config()
    err = caught.value
    assert (err.setting, err.value) == ("prune_fraction", 1.5)
    assert str(err) == "prune fraction 1.5 must be between 0 and 1"
    assert err.worded("--prune-fraction") == "--prune-fraction 1.5 must be between 0 and 1"
