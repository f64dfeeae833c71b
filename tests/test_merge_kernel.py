"""The compiled merge loop (bpe/mergekernel.py) against the numpy/Python path: the same merges,
undos, pair tables and transfers, on real text and on generated text, for every tie-break."""

import pickle
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import reference_train
from test_trainer_properties import SPLITS, _check_invariants, _state

import tokworkbench.core.bpe.trainer as trainer_module
from tokworkbench.core import TrainConfig, Trainer, jit, pre_tokenizer
from tokworkbench.core.bpe.tiebreak import TIE_BREAKS

pytestmark = pytest.mark.skipif(not jit.available(), reason="numba cannot run here")
SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"


def _pair(texts, config: TrainConfig) -> tuple[Trainer, Trainer]:
    """(numpy path, compiled path) trainers on the same texts."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TOKWORKBENCH_NO_JIT", "1")
        plain = Trainer(texts, config)
    compiled = Trainer(texts, config)
    return plain, compiled


def _compiled(t: Trainer) -> bool:
    return t.training_state().get("_kernel") is not None


def _rows(records):
    return [(r.step, r.pair, r.new_id, r.count, r.replacements, r.length) for r in records]


def _samples(names) -> list[str]:
    return [(SAMPLES / n).read_text(encoding="utf-8") for n in names]


CORPORA = {
    "english": ["01_en_genesis_kjv.txt", "02_en_devils_dictionary.txt"],
    "cjk": ["05_zh_debian_installer.txt", "06_ja_debian_installer.txt", "07_ko_debian_installer.txt"],
    "mixed": ["03_udhr_article1.txt", "04_emoji_symbols_numbers.txt", "08_ru_fortunes.txt",
              "09_ar_debian_handbook.txt", "12_code_sample.py"],
}


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("tie", TIE_BREAKS)
@pytest.mark.parametrize("units", ["byte", "char"])
def test_the_compiled_loop_merges_as_the_numpy_path_on_real_text(corpus, tie, units):
    config = TrainConfig(units=units, tie_break=tie, pre_tokenizer=pre_tokenizer("gpt4"))
    plain, compiled = _pair(_samples(CORPORA[corpus]), config)
    # char units with lexmin/lexmax compare token strings: those stay on the numpy path
    assert _compiled(compiled) == (units == "byte" or tie in ("first", "hf"))
    assert _rows(compiled.run(merges=1500)) == _rows(plain.run(merges=1500))
    assert compiled.vocab == plain.vocab and compiled.total_tokens == plain.total_tokens
    assert compiled.pair_counts() == plain.pair_counts()
    assert [(r.left, r.right, r.count) for r in compiled.top_pairs(30)] == \
           [(r.left, r.right, r.count) for r in plain.top_pairs(30)]
    assert compiled.next_rows(5, "e") == plain.next_rows(5, "e")
    for _ in range(700):
        assert compiled.undo() == plain.undo()
    assert _state(compiled) == _state(plain)
    assert _rows(compiled.run(merges=400)) == _rows(plain.run(merges=400))
    _check_invariants(compiled)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(alphabet="aab c\nдé😀", max_size=80), min_size=1, max_size=4),
       units=st.sampled_from(["byte", "char"]), tie=st.sampled_from(TIE_BREAKS), split=st.sampled_from(SPLITS),
       ops=st.lists(st.sampled_from(["step", "undo", "run"]), max_size=40))
def test_steps_undos_and_runs_leave_the_same_trainer_on_both_paths(texts, units, tie, split, ops):
    config = TrainConfig(units=units, tie_break=tie, pre_tokenizer=pre_tokenizer(split))
    plain, compiled = _pair(texts, config)
    for op in ops:
        if op == "run":
            assert _rows(compiled.run(merges=7)) == _rows(plain.run(merges=7))
        else:
            assert getattr(compiled, op)() == getattr(plain, op)()
        assert _state(compiled) == _state(plain)
    _check_invariants(compiled)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(max_size=120), min_size=1, max_size=3), tie=st.sampled_from(TIE_BREAKS),
       k=st.integers(1, 60))
def test_any_text_merges_as_the_reference(texts, tie, k):
    texts = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]  # no lone surrogates
    pre = pre_tokenizer("gpt4")
    t = Trainer(texts, TrainConfig(units="byte", tie_break=tie, pre_tokenizer=pre))
    assert _compiled(t)
    ref, ref_vocab = reference_train(texts, "byte", tie, pre.split, k)
    assert [(r.pair, r.new_id, r.count, r.replacements, r.length) for r in t.run(merges=k)] == ref
    assert t.vocab == ref_vocab


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.text(alphabet="ab c\nдé😀", max_size=60), min_size=1, max_size=4),
       tie=st.sampled_from(TIE_BREAKS), k=st.integers(0, 30), keep=st.integers(1, 4))
def test_a_heap_with_a_low_floor_merges_and_undoes_as_the_numpy_path(texts, tie, k, keep):
    config = TrainConfig(tie_break=tie, pre_tokenizer=pre_tokenizer("gpt4"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trainer_module, "HEAP_KEEP", keep)  # the floor moves up and down all the time
        plain, compiled = _pair(texts, config)
        assert _rows(compiled.run(merges=k)) == _rows(plain.run(merges=k))
        assert [(r.left, r.right, r.count) for r in compiled.top_pairs(8)] == \
               [(r.left, r.right, r.count) for r in plain.top_pairs(8)]
        while compiled.history:
            assert compiled.undo() == plain.undo()
        assert _state(compiled) == _state(plain)


@pytest.mark.parametrize("tie", TIE_BREAKS)
def test_a_compiled_state_travels_and_goes_on_as_the_original(tie):
    texts = _samples(CORPORA["mixed"])
    config = TrainConfig(tie_break=tie, pre_tokenizer=pre_tokenizer("gpt2"))
    worked, fresh = Trainer(texts, config), Trainer(texts, config)
    list(worked.run(merges=300))
    fresh.restore_state(pickle.loads(pickle.dumps(worked.training_state(), protocol=5)))
    fresh.own_arrays()
    assert _state(fresh) == _state(worked)
    assert _rows(fresh.run(merges=50)) == _rows(worked.run(merges=50))
    while worked.history:
        assert fresh.undo() == worked.undo()
    assert _state(fresh) == _state(worked)


@pytest.mark.parametrize("tie", ["hf", "first"])
def test_64_bit_links_merge_and_undo_as_32_bit_ones(monkeypatch, tie):
    """A corpus of over 2**29 units links its pool and pair table with 64 bits (a wider table
    row); here a small one is made to, and must train and undo exactly as with 32 bits."""
    from tokworkbench.core.bpe import kernelpairs

    texts = _samples(CORPORA["mixed"])
    config = TrainConfig(tie_break=tie, pre_tokenizer=pre_tokenizer("gpt2"))
    narrow = Trainer(texts, config)
    monkeypatch.setattr(kernelpairs, "LINKS32_BELOW", 0)
    wide = Trainer(texts, config)
    assert wide.training_state()["_kernel"]["plink"].dtype == "int64"
    assert narrow.training_state()["_kernel"]["plink"].dtype == "int32"
    assert _rows(wide.run(merges=400)) == _rows(narrow.run(merges=400))
    for _ in range(150):
        assert wide.undo() == narrow.undo()
    assert _state(wide) == _state(narrow)
    assert _rows(wide.run(merges=200)) == _rows(narrow.run(merges=200))


def test_a_pool_that_outgrows_32_bit_links_widens_them_and_goes_on_exactly(monkeypatch):
    """Steps and undos can take the pool past 4 nodes a unit, the size its links were chosen
    for (an undo puts back positions the lists still hold): the grow that would pass 32 bits
    widens the links and the table's rows instead, and training goes on exactly."""
    from tokworkbench.core.bpe import kernelpairs

    texts = _samples(CORPORA["mixed"])
    config = TrainConfig(tie_break="hf", pre_tokenizer=pre_tokenizer("gpt2"))
    kept, widened = Trainer(texts, config), Trainer(texts, config)
    links = lambda t: t.training_state()["_kernel"]["plink"].dtype  # noqa: E731
    for _ in range(60):  # merges then undos, until the pool grows
        monkeypatch.setattr(kernelpairs, "LINKS32_BELOW", 1)  # any grow of this one passes the bound
        made = _rows(widened.run(merges=200))
        undone = [widened.undo() for _ in range(200)]
        monkeypatch.setattr(kernelpairs, "LINKS32_BELOW", 2**31)
        assert made == _rows(kept.run(merges=200))
        assert undone == [kept.undo() for _ in range(200)]
        if links(widened) == "int64":
            break
    assert links(widened) == "int64" and links(kept) == "int32", "the pool never grew"
    assert widened.training_state()["_kernel"]["table"].dtype["head"] == "int64"
    assert _state(widened) == _state(kept)
    assert _rows(widened.run(merges=300)) == _rows(kept.run(merges=300))
    for _ in range(100):
        assert widened.undo() == kept.undo()
    assert _state(widened) == _state(kept)


def test_loading_the_step_code_changes_nothing_and_is_the_code_a_step_runs(monkeypatch):
    """The parent loads the compiled step while the child trains (Trainer.load_step_code), on its
    own arrays or on a state taken back: with the very types a step passes (numba keeps one
    compiled version per types), so the step after it has nothing left to load."""
    import numba

    from tokworkbench.core.bpe import mergekernel

    texts = _samples(CORPORA["english"])
    config = TrainConfig(tie_break="hf", pre_tokenizer=pre_tokenizer("gpt4"))
    loaded, other, taken = Trainer(texts, config), Trainer(texts, config), Trainer(texts, config)
    list(loaded.run(merges=20))
    list(other.run(merges=20))
    taken.restore_state(pickle.loads(pickle.dumps(loaded.training_state(), protocol=5)))
    kernel, seen = mergekernel.run, []
    monkeypatch.setattr(mergekernel, "run", lambda *args: seen.append(tuple(map(numba.typeof, args))) or kernel(*args))
    for t in (loaded, taken):
        state = _state(t)
        t.load_step_code()
        assert _state(t) == state
    assert len(seen) == 2
    assert _rows(loaded.run(merges=30)) == _rows(other.run(merges=30)) == _rows(taken.run(merges=30))
    assert len(seen) > 2 and set(seen) == {seen[0]}


def test_a_replay_runs_on_the_compiled_path_then_training_goes_on():
    texts = _samples(CORPORA["english"])
    config = TrainConfig(tie_break="hf", pre_tokenizer=pre_tokenizer("gpt4"))
    source = Trainer(texts[:1], config)
    list(source.run(merges=40))
    plain, compiled = _pair(texts, config)
    for t in (plain, compiled):
        t.replay(list(source.merges) + [(7, 7)])  # a pair that never occurs here
    assert _rows(compiled.run(merges=80)) == _rows(plain.run(merges=80))
    assert compiled.merges[:41] == source.merges + [(7, 7)]
    while compiled.history:
        assert compiled.undo() == plain.undo()
    assert _state(compiled) == _state(plain)


def test_a_run_its_caller_leaves_stops_where_the_caller_stopped():
    """The compiled loop merges in batches; what it made ahead of a caller who stopped asking
    is undone."""
    texts = _samples(CORPORA["english"])
    config = TrainConfig(tie_break="first", pre_tokenizer=pre_tokenizer("gpt4"))
    plain, compiled = _pair(texts, config)
    for t in (plain, compiled):
        run = t.run(merges=5000)
        for _ in range(100):
            next(run)
        run.close()
    assert len(compiled.history) == 100
    assert _state(compiled) == _state(plain)


def test_distinct_pairs_rebuild_the_heap_a_bounded_number_of_times():
    from tokworkbench.core.bpe import mergekernel

    rng = random.Random(5)
    text = "".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(40_000)) + "ab" * 40
    t = Trainer([text], TrainConfig(units="char", tie_break="first", pre_tokenizer=pre_tokenizer("none")))
    before = int(t.training_state()["_kernel"]["meta"][mergekernel.REBUILDS])
    records = list(t.run(merges=60))
    assert int(t.training_state()["_kernel"]["meta"][mergekernel.REBUILDS]) - before <= 6
    ref, _ = reference_train([text], "char", "first", pre_tokenizer("none").split, 60)
    assert [(r.pair, r.new_id, r.count, r.replacements, r.length) for r in records] == ref


def test_the_switch_turns_the_compiled_path_off(monkeypatch):
    monkeypatch.setenv("TOKWORKBENCH_NO_JIT", "1")
    assert not _compiled(Trainer(["aab aab"], TrainConfig()))
    monkeypatch.delenv("TOKWORKBENCH_NO_JIT")
    assert _compiled(Trainer(["aab aab"], TrainConfig()))
