"""A token that stands for unknown text covers the characters it stands for, not the length of
its own name: the encode, compare and corpus views draw every token over its own characters."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.inspection.roundtrip import round_trip
from tokworkbench.core.models.roles import Roles
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

FIXED = FixedVocab(("<s>", "</s>", "<pad>", "<unk>", "我", "喜欢", "学习", "AI"),
                   Roles(bos="<s>", eos="</s>", pad="<pad>", unk="<unk>"))


def _tiling(rt):
    """Spans lie end to end over the normalized text (views colour each one)."""
    ends = [0] + [s.end for s in rt.spans]
    return [s.start for s in rt.spans] == ends[:-1] and ends[-1] == len(rt.normalized)


def test_a_fixed_vocabulary_unk_covers_one_character():
    rt = round_trip(FIXED, "x我y喜欢")
    assert rt.ids == [3, 4, 3, 5]
    assert [(s.start, s.end) for s in rt.spans] == [(0, 1), (1, 2), (2, 3), (3, 5)]


def test_a_char_unit_bpe_unk_covers_one_character():
    trainer = Trainer(["aab aab"], TrainConfig(units="char", pre_tokenizer=pre_tokenizer("none"),
                                               special_tokens=("<unk>",)))
    list(trainer.run(merges=2))
    rt = round_trip(trainer.model(), "aabzaab")
    unk = trainer.model().special_ids["<unk>"]
    assert unk in rt.ids and _tiling(rt)
    assert [rt.normalized[s.start:s.end] for s in rt.spans if s.token == unk] == ["z"]


def test_a_unigram_unk_covers_its_whole_run_of_unknown_characters():
    learner = UnigramLearner(["ab ab ba"], UnigramConfig(seed_size=10))
    model = learner.model()
    rt = round_trip(model, "abzzq ba")
    assert _tiling(rt)
    assert [rt.normalized[s.start:s.end] for s in rt.spans if s.token == 0] == ["zzq"]


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet="我喜欢学习AIxyz ", max_size=30))
def test_spans_tile_the_text_whatever_is_unknown(text):
    for model in (FIXED, UnigramLearner(["我喜欢 学习AI"], UnigramConfig(seed_size=30)).model()):
        rt = round_trip(model, text)
        if rt.error is None:
            assert _tiling(rt), (text, rt.spans)
