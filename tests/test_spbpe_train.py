"""SentencePiece-BPE training against spm_train itself (sentencepiece, the judge): the same
model (pieces in the same order, scores, types, normalizer), the same ids on held-out text,
exact undo, a worker's state, our model file, the command line."""

import pickle
from pathlib import Path

import pytest

from tokworkbench.cli import main
from tokworkbench.core.errors import CorpusError, SettingError, TrainingError
from tokworkbench.core.formats.sentencepiece import from_sentencepiece
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.kinds import SPBPE, TRAINABLE
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.spbpe.learner import SpBpeConfig, SpBpeLearner

spm = pytest.importorskip("sentencepiece")

DATA = Path(__file__).parent / "data"
BOTCHAN = DATA / "botchan.txt"
SAMPLES = sorted(p for p in (Path(__file__).parent.parent / "sample_texts").iterdir() if p.name[:2].isdigit())


def _spm_model(tmp_path: Path, inputs: list[Path], vocab: int, **flags):
    prefix = tmp_path / f"spm{vocab}"
    spm.SentencePieceTrainer.train(input=",".join(map(str, inputs)), model_prefix=str(prefix), vocab_size=vocab,
                                   model_type="bpe", minloglevel=2, **flags)
    return Path(f"{prefix}.model")


def _ours(inputs: list[Path], vocab: int, config: SpBpeConfig):
    learner = SpBpeLearner([p.read_text(encoding="utf-8") for p in inputs], config)
    list(learner.run(vocab_size=vocab))
    return learner


def _held_out_lines() -> list[str]:
    return [line for p in SAMPLES for line in p.read_text(encoding="utf-8").split("\n")]


@pytest.mark.parametrize("vocab", [1000, 4000])
def test_botchan_with_byte_fallback_is_spm_trains_model(tmp_path, vocab):
    ref_path = _spm_model(tmp_path, [BOTCHAN], vocab, byte_fallback=True)
    ref = from_sentencepiece(ref_path.read_bytes())
    model = _ours([BOTCHAN], vocab, SpBpeConfig(byte_fallback=True)).model()
    first = next((i for i, (a, b) in enumerate(zip(model.pieces, ref.pieces)) if a != b), None)
    assert first is None, (first, model.pieces[first], ref.pieces[first])
    assert model == ref  # scores (-index), types, normalizer, roles too
    processor = spm.SentencePieceProcessor(model_file=str(ref_path))
    lines = _held_out_lines()
    assert sum(len(processor.encode(line)) for line in lines) > 50_000
    assert [model.encode_ordinary(line) for line in lines] == [processor.encode(line) for line in lines]


@pytest.mark.parametrize(("coverage", "byte_fallback", "vocab", "rule"),
                         [(0.98, False, 1500, "nmt_nfkc"), (1.0, True, 4000, "identity")])
def test_many_scripts_rare_characters_and_tabs(tmp_path, coverage, byte_fallback, vocab, rule):
    """Twelve languages: characters past the coverage become <unk>; the identity rule keeps
    tabs (08_ru has them), which spm_train treats as characters."""
    ref_path = _spm_model(tmp_path, SAMPLES, vocab, byte_fallback=byte_fallback, character_coverage=coverage,
                          normalization_rule_name=rule)
    model = _ours(SAMPLES, vocab, SpBpeConfig(coverage, byte_fallback, 16, rule)).model()
    assert model == from_sentencepiece(ref_path.read_bytes())


def test_meta_pieces_in_the_text_cut_the_sentence(tmp_path):
    corpus = tmp_path / "metas.txt"
    corpus.write_text("kq<s>zj and </s>more\n" * 40 + "tab\t\tbed <unk>x\n" * 30, encoding="utf-8")
    ref_path = _spm_model(tmp_path, [corpus], 60, normalization_rule_name="identity", hard_vocab_limit=False)
    ref = from_sentencepiece(ref_path.read_bytes())
    learner = _ours([corpus], 60, SpBpeConfig(rule="identity"))
    assert learner.next_step() is None  # spm_train too ran out of pairs before 60
    assert learner.model() == ref


def test_undo_is_exact_and_training_goes_on_the_same():
    text = BOTCHAN.read_text(encoding="utf-8")
    straight = SpBpeLearner([text], SpBpeConfig(byte_fallback=True))
    list(straight.run(merges=400))
    learner = SpBpeLearner([text], SpBpeConfig(byte_fallback=True))
    list(learner.run(merges=250))
    before = (learner.model(), learner.next_step(), learner.next_rows(50), learner.total_tokens, learner.history_rows(9))
    list(learner.run(merges=130))  # across the active pairs' refresh at 300
    for _ in range(130):
        assert learner.undo() is not None
    assert (learner.model(), learner.next_step(), learner.next_rows(50), learner.total_tokens,
            learner.history_rows(9)) == before
    list(learner.run(merges=150))
    assert learner.model() == straight.model()
    assert learner.history == straight.history


def test_rows_name_the_next_merge_and_the_history():
    learner = SpBpeLearner([BOTCHAN.read_text(encoding="utf-8")])
    rows, total = learner.next_rows(5)
    assert total > len(rows) and (rows[0].left, rows[0].right) == learner.next_step()
    assert learner.step_text(learner.next_step()) == rows[0].merged_text == "▁t"
    record = learner.step()
    model = learner.model()
    assert model.token(record.new_id) == "▁t" and model.token(record.pair[0]) == "▁"
    assert model.token(record.pair[1]) == "t" and record.count == rows[0].count
    assert learner.total_tokens == learner.initial_tokens - record.replacements
    assert learner.history_rows(1)[0].text == "▁t"
    filtered, _ = learner.next_rows(10, "he")
    assert filtered and all("he" in row.merged_text for row in filtered)


def test_a_workers_state_carries_the_training_over():
    text = BOTCHAN.read_text(encoding="utf-8")
    worker = SpBpeLearner([text])
    list(worker.run(merges=120))
    here = SpBpeLearner([text])
    here.restore_state(pickle.loads(pickle.dumps(worker.training_state())))
    assert here.model() == worker.model() and here.next_step() == worker.next_step()
    assert here.undo() == worker.history[-1]
    assert len(here.history) == 119


def test_a_trained_model_saves_and_opens_with_the_same_ids(tmp_path):
    model = _ours([BOTCHAN], 1000, SpBpeConfig(byte_fallback=True)).model()
    path = tmp_path / "sp.json"
    modelfile.save(model, path)
    again = load_any(path)
    assert again == model
    lines = _held_out_lines()
    assert [again.encode_ordinary(line) for line in lines] == [model.encode_ordinary(line) for line in lines]


def test_the_command_line_trains_spm_trains_model(tmp_path, capsys):
    out = tmp_path / "cli.json"
    assert main(["train", str(BOTCHAN), "--kind", "spbpe", "--vocab-size", "1000", "--byte-fallback",
                 "--character-coverage", "0.9995", "-o", str(out)]) == 0
    assert "trained 672 merges, vocabulary 1000" in capsys.readouterr().out
    ref = from_sentencepiece(_spm_model(tmp_path, [BOTCHAN], 1000, byte_fallback=True).read_bytes())
    assert load_any(out) == ref


def test_the_kind_record_and_settings():
    assert "spbpe" in TRAINABLE and SPBPE.step == "merge"
    learner = Settings(kind="spbpe", character_coverage=1.0, byte_fallback=True).learner(["hello world\n"])
    assert learner.config == SpBpeConfig(1.0, True, 16, "nmt_nfkc")
    assert learner.vocab_size == 3 + 256 + len(set("▁helowrd"))


def test_bad_settings_and_inputs_say_so():
    with pytest.raises(SettingError, match="character coverage 0.5"):
        SpBpeConfig(character_coverage=0.5)
    with pytest.raises(TrainingError, match="normalization rule"):
        SpBpeConfig(rule="nfkc_cf")
    with pytest.raises(TrainingError, match="special tokens are <unk>, <s> and </s>"):
        Settings(kind="spbpe", special_tokens=("<pad>",)).config()
    learner = SpBpeLearner(["abc abd\n"])
    with pytest.raises(TrainingError, match="below what every model here holds"):
        learner.steps_for_vocab(3)
    with pytest.raises(CorpusError):
        SpBpeLearner(["\n\n"])


def test_the_session_runs_it_in_a_worker_like_bpe(tmp_path):
    """What the workbench does: a snapshot with the pair table and the next merge, a run in a
    forked worker whose state comes back, undo after it, the history CSV, a save."""
    from tokworkbench.core.session.childrun import run_in_child
    from tokworkbench.core.session.session import FinishReason, Session
    from tokworkbench.core.session.snapshot import View

    settings = Settings(kind="spbpe", target=600, byte_fallback=True,
                        roles={"unk": "<unk>", "bos": "<s>", "eos": "</s>"})
    here = Session.open([str(BOTCHAN)], settings)
    snap = here.snapshot(View(doc=0, start=2000, size=400))
    assert snap.kind == "spbpe" and snap.steps == 0
    text, spans = snap.window.text, snap.window.spans
    assert len(text) == 400 and spans and " " not in text and "▁" in text  # as the model sees it
    assert "".join(text[s.start:s.end] for s in spans if s.start >= 0) in text.replace("\n", "")
    assert (snap.next_rows[0].left, snap.next_rows[0].right) == snap.next_step
    todo = here.steps_to_target()
    assert todo == 600 - here.learner.base_size
    while here.learner.vocab_size < 600:
        here.step()
    later = here.snapshot(View(doc=0, start=2000, size=400)).window
    assert later.text == text and len(later.spans) < len(spans)  # the merges show in the corpus
    there = Session.open([str(BOTCHAN)], settings)
    finished = run_in_child(there, View(), lambda: False, lambda progress: None)
    assert finished.reason is FinishReason.TARGET and finished.done == todo
    assert there.learner.history == here.learner.history
    assert there.learner.model() == here.learner.model()
    assert there.undo() == here.undo() and there.step() == here.step()
    history = there.export_history(tmp_path / "h.csv")
    assert len(Path(history).read_text(encoding="utf-8").splitlines()) == todo + 1
    saved = there.save(tmp_path / "m.json")
    assert load_any(saved) == there.learner.model()


def test_a_target_left_to_the_corpus_rises_above_what_every_model_holds():
    fitted = Settings(kind="spbpe", target=100, byte_fallback=True).fitted(50, ("target",))
    assert fitted.target > 3 + 256 + 50 and fitted.target % 100 == 0
    assert Settings(kind="spbpe", target=5000).fitted(50, ("target",)).target == 5000
    assert Settings(kind="spbpe", target=100).fitted(50, ()).target == 100  # given, not left to the corpus
