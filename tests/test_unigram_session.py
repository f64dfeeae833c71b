"""Unigram through the session the app drives: snapshots, the corpus window, round trips."""

import csv
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core.errors import CorpusError
from tokworkbench.core.session.session import Session
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import View
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner, lattice

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"


def test_session_steps_undoes_and_draws(tmp_path):
    paths = [str(SAMPLES / "03_udhr_article1.txt"), str(SAMPLES / "08_ru_fortunes.txt")]
    session = Session.open(paths, Settings(kind="unigram", split="metaspace", seed_size=900, target=500))
    snap = session.snapshot(View(doc=1, size=300))
    assert snap.kind == "unigram" and snap.steps == 0 and snap.vocab_size == 901
    assert snap.history[0].round == 0 and snap.next_rows[0].removed_next
    text = snap.window.text
    assert text.startswith("▁") and " " not in text
    assert "".join(text[s.start : s.end] for s in snap.window.spans) == text[: snap.window.spans[-1].end]
    todo = session.steps_to_target()
    finished = None
    steps = session.run(View())
    try:
        while True:
            next(steps)
    except StopIteration as stop:
        finished = stop.value
    assert finished.done == todo and session.learner.vocab_size <= 500
    assert session.unsaved
    session.save(tmp_path / "m.json")
    assert not session.unsaved
    session.export_history(tmp_path / "h.csv")
    with open(tmp_path / "h.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert len(rows) == todo + 2 and rows[1][:2] == ["0", "901"]
    assert session.export("hf", tmp_path / "t.json")[-1].startswith("wrote")
    session.undo_all()
    assert session.steps == 0 and session.snapshot().vocab_size == 901


def test_window_spans_are_the_models_encoding():
    text = (SAMPLES / "02_en_devils_dictionary.txt").read_text(encoding="utf-8")[:3000]
    learner = UnigramLearner([text], UnigramConfig(seed_size=600), keep_layout=True)
    learner.step()
    start, window, spans, length = learner.window(0, 0, 400)
    model = learner.model()
    ids = model.encode(text)
    assert [s.token for s in spans] == ids[: len(spans)]
    assert length == len(model.pre_tokenizer.surface(text))


def test_lattice_of_a_model_shows_unknown_characters():
    learner = UnigramLearner(["ab ab ba"], UnigramConfig(seed_size=10))
    lat = lattice(learner.model(), "▁az")
    unknown = [e for e in lat.edges if e.id == 0]
    assert [(e.start, e.end, e.piece) for e in unknown] == [(2, 3, "z")]
    assert lat.edges[lat.path[-1]].id == 0 and len(lat.best) == 4


PLAIN = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="▁"), max_size=80)


@settings(max_examples=150, deadline=None)
@given(PLAIN)
def test_round_trip_on_arbitrary_text(text):
    """Every character of the training text is a piece, so nothing is unknown; metaspace loses
    only a leading space (its prepended ▁ stands for it), as HF's does."""
    learner = UnigramLearner([text + " x"], UnigramConfig(seed_size=400))
    list(learner.run(merges=2))
    model = learner.model()
    ids = model.encode_ordinary(text)  # "<unk>" in the text is text here
    assert 0 not in ids
    expected = text[1:] if text.startswith(" ") else text
    assert model.decode(ids) == expected
    assert model.decode_bytes(ids) == expected.encode("utf-8")
    assert sum(len(model.token(i)) for i in ids) == len(model.pre_tokenizer.surface(text))


def test_replay_a_unigram_model_on_the_corpus(tmp_path):
    from tokworkbench.core.registry.export import export
    from tokworkbench.core.registry.load import load_any

    texts = [(SAMPLES / name).read_text(encoding="utf-8") for name in ("02_en_devils_dictionary.txt",
                                                                       "03_udhr_article1.txt")]
    other = UnigramLearner(texts, UnigramConfig(seed_size=800))
    list(other.run(vocab_size=500))
    export(other.model(), "hf", tmp_path / "t.json")
    model = load_any(tmp_path / "t.json")  # a HF tokenizer.json Unigram model
    session = Session.open([str(SAMPLES / "01_en_genesis_kjv.txt")],
                           Settings(kind="unigram", split="metaspace", seed_size=600, target=300))
    session.step()
    assert session.replay(model, "t.json") == 1
    learner = session.learner
    assert learner.history_rows(5)[0].round == 0 and learner.config.algorithm == "em"
    line = "And God said, Let there be light: and there was light."
    ours = learner.model()
    assert [ours.token(i) for i in ours.encode(line)] == [model.token(i) for i in model.encode(line)]
    assert learner.base_size >= len({c for c in "".join(learner.words)})  # missing characters added
    record = session.step()
    assert record.round == 1 and record.removed
    session.undo()
    assert [ours.token(i) for i in learner.model().encode(line)] == [model.token(i) for i in model.encode(line)]


def test_replay_refuses_a_bpe_model_on_a_unigram_session():
    import pytest

    from tokworkbench.core.bpe.trainer import TrainConfig, train
    from tokworkbench.core.errors import TrainingError

    bpe = train(["abc abc"], TrainConfig(), merges=2).model()
    session = Session.open([str(SAMPLES / "03_udhr_article1.txt")],
                           Settings(kind="unigram", split="metaspace", seed_size=600))
    with pytest.raises(TrainingError, match="like with like"):
        session.replay(bpe, "x")


def test_replaying_an_em_model_keeps_its_ids_and_roles():
    """em's model starts <unk> <s> </s>: a replay keeps them ahead of its pieces (it had <unk>
    alone, and every id moved down by two), and a user-defined piece is not a trained one too."""
    from tokworkbench.core.registry.kinds import _unigram_replay

    text = (SAMPLES / "01_en_genesis_kjv.txt").read_text(encoding="utf-8")[:40000]
    for users in ((), ("<usr>",)):
        settings = Settings(kind="unigram", units="char", split="metaspace", algorithm="em", seed_size=1_000_000,
                            normalizer="none", user_defined_symbols=users, target=400)
        learner = settings.learner([text])
        list(learner.run(vocab_size=learner.base_size + 100))
        model = learner.model()
        replayed = _unigram_replay(settings.learner([text]), model, settings).model()
        line = "In the beginning God created <usr> the heaven"
        assert replayed.encode_ordinary(line) == model.encode_ordinary(line), users
        assert replayed.roles == model.roles and replayed.roles.bos == "<s>"
        pieces = [p for p, _ in replayed.pieces]
        assert len(pieces) == len(set(pieces)), users


def test_the_fitted_target_holds_ems_meta_and_byte_pieces():
    text = "\n".join(chr(0x4E00 + i) * 3 for i in range(900))  # lines: spm_train skips one over 4,192 bytes
    settings = Settings(kind="unigram", units="char", split="metaspace", algorithm="em", seed_size=1_000_000,
                        normalizer="none", byte_fallback=True, character_coverage=1.0, fit=("target",))
    fitted = settings.fitted(len(set(text)))
    learner = fitted.learner([text])
    assert fitted.target > learner.base_size == 259 + 901
    learner.steps_for_vocab(fitted.target)  # no "below the distinct characters"


SAMPLE_TEXT_FOR_LAZY = "the quick brown fox jumps over the lazy dog\n" * 30 + "pack my box with five dozen jugs\n" * 20


def test_em_without_a_layout_counts_the_sessions_chunks_only_when_asked(monkeypatch):
    """The command line's em reads the lines alone; the chunk table other kinds reuse comes when
    asked for, the same as the one counted with the lines."""
    from tokworkbench.core.unigram import learner as learner_module

    texts = [SAMPLE_TEXT_FOR_LAZY, "naïve café\nnaïve cafés, again " * 20]
    config = UnigramConfig(algorithm="em", num_threads=2)
    counted = []
    real = learner_module.count_chunks
    monkeypatch.setattr(learner_module, "count_chunks", lambda *a, **k: counted.append(1) or real(*a, **k))
    lazy = UnigramLearner(texts, config)
    assert counted == []
    eager = UnigramLearner(texts, config, keep_layout=True)
    assert counted == [1]
    assert (lazy.documents, lazy.chars, lazy.bytes) == (eager.documents, eager.chars, eager.bytes)
    assert lazy.model().pieces == eager.model().pieces and lazy.initial_tokens == eager.initial_tokens
    table = lazy.chunk_table
    assert counted == [1, 1]
    assert table.chunks == eager.chunk_table.chunks and table.counts.tolist() == eager.chunk_table.counts.tolist()
    assert lazy.words == eager.words and lazy.freqs == eager.freqs
    assert "_texts" not in lazy.training_state()



def test_em_without_a_layout_names_a_lone_surrogate_as_counting_does():
    for keep_layout in (False, True):
        with pytest.raises(CorpusError, match="lone surrogate"):
            UnigramLearner(["fine text\nbad \ud800 here\n"], UnigramConfig(algorithm="em"), keep_layout=keep_layout)
