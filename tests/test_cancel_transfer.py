"""A cancelled run comes back through shared memory a part at a time (core/transfer.py): what
the parent rebuilds must be exactly what the child had, and a cancelled run then stepped or
undone must be the trainer an uninterrupted one is."""

import mmap
import multiprocessing
import pickle
import threading
import time

import numpy as np
import pytest
from test_trainer_properties import _check_invariants, _state

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bpe import flatchunks
from tokworkbench.core.session.childrun import run_in_child
from tokworkbench.core.session.session import FinishReason, Session
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import View
from tokworkbench.core.text.parallel import can_fork
from tokworkbench.core.text.samples import sample_paths
from tokworkbench.core.transfer import SMALL_BUFFER, Arena, Rebuild, built, pack, unpack

fork_only = pytest.mark.skipif(not can_fork(), reason="shared memory crosses a fork only")


def _arrays():
    rng = np.random.default_rng(7)
    return {"ids": rng.integers(-1, 2**31 - 1, 300_000, dtype=np.int32),
            "keys": rng.integers(0, 2**62, 50_000, dtype=np.int64),
            "small": np.arange(10, dtype=np.int32), "words": ["a", "bb"]}


def _child_packs(arena, conn):
    conn.send(pack(_arrays(), arena))
    conn.close()


@fork_only
def test_arrays_a_child_packs_come_back_equal_where_they_lie():
    arena = Arena(4 << 20)
    receive, send = multiprocessing.get_context("fork").Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_child_packs, args=(arena, send))
    child.start()
    packed = receive.recv()
    child.join()
    # the two large arrays went through the arena, the small one in the pickle
    assert [n for _, n in packed.buffers] == [300_000 * 4, 50_000 * 8] and SMALL_BUFFER > 40
    assert len(packed.data) < 10_000
    got = unpack(packed, arena)
    want = _arrays()
    assert got.keys() == want.keys() and got["words"] == want["words"]
    for name in ("ids", "keys", "small"):
        assert got[name].dtype == want[name].dtype and np.array_equal(got[name], want[name])
    shared = np.frombuffer(arena.memory, dtype=np.uint8)
    assert np.shares_memory(got["ids"], shared) and got["ids"].flags.writeable  # no copy was made
    del arena, shared
    assert np.array_equal(got["keys"], want["keys"])  # the mapping lives on with its views


def test_a_full_arena_keeps_the_buffer_in_the_pickle():
    arena = Arena(4096)
    value = {"big": np.arange(100_000, dtype=np.int64)}
    packed = pack(value, arena)
    assert packed.buffers == () and len(packed.data) > 800_000
    assert np.array_equal(unpack(packed, arena)["big"], value["big"])


def test_a_rebuild_is_made_by_unpickling_or_by_built():
    later = Rebuild(sorted, [3, 1, 2])
    assert pickle.loads(pickle.dumps(later)) == [1, 2, 3] == built(later)
    assert built([4]) == [4]


def _worked(small=10**9):
    texts = ["low lower lowest newer wider aaaa " * 3, "the quick brown fox 123 4567 ааа жж"]
    t = Trainer(texts, TrainConfig(tie_break="first", pre_tokenizer=pre_tokenizer("gpt2")))
    flatchunks.SMALL, old = small, flatchunks.SMALL
    try:
        list(t.run(merges=60))
        for _ in range(7):
            t.undo()  # undo puts positions back: entries with repeats, lists joined to arrays
    finally:
        flatchunks.SMALL = old
    return t


@pytest.mark.parametrize("small", [-1, 10**9])  # the index holds arrays, or lists
def test_the_index_packs_and_unpacks_to_the_same_positions(small, monkeypatch):
    monkeypatch.setenv("TOKWORKBENCH_NO_JIT", "1")  # the index of the numpy path (the compiled one holds arrays)
    t = _worked(small)
    index = t._flat.index
    assert index
    back = flatchunks._unpack(*flatchunks._pack(index, t._flat.next.dtype))
    assert back.keys() == index.keys()
    for key, where in index.items():
        got = back[key]
        assert isinstance(got, np.ndarray) and got.dtype == t._flat.next.dtype and list(got) == list(where)


def test_an_empty_index_packs_and_unpacks():
    assert flatchunks._unpack(*flatchunks._pack({}, np.int32)) == {}


@pytest.mark.parametrize("through_pickle", [False, True])
def test_a_state_restored_directly_or_unpickled_is_the_same_trainer(through_pickle):
    """Directly, the two trainers share the state's objects; the fresh one is compared with a
    third trainer that did the same work."""
    worked, same = _worked(), _worked()
    fresh = Trainer(["low lower lowest newer wider aaaa " * 3, "the quick brown fox 123 4567 ааа жж"],
                    TrainConfig(tie_break="first", pre_tokenizer=pre_tokenizer("gpt2")))
    state = worked.training_state()
    fresh.restore_state(pickle.loads(pickle.dumps(state)) if through_pickle else state)
    assert _state(fresh) == _state(same)
    _check_invariants(fresh)
    for _ in range(5):
        assert fresh.step() == same.step()
    while same.history:
        assert fresh.undo() == same.undo()
    assert _state(fresh) == _state(same)


@fork_only
@pytest.mark.parametrize("tie", ["first", "hf"])
def test_a_cancelled_forked_run_then_steps_and_undoes_as_an_uninterrupted_trainer(tie):
    paths = [str(p) for p in sample_paths()]
    there = Session.open(paths, Settings(target=60_000, tie_break=tie))
    stop = threading.Event()

    def progress(report):
        stop.set()  # cancel at the first report (0.2 s in): some merges made, most not

    # The compiled merge loop makes all 12,876 merges in less than the first report's 0.2 s;
    # the child's steps are slowed (1 ms each, about 13 s in all) so the cancel lands mid-run.
    learner_type = type(there.learner)
    real_step = learner_type.step

    def slow_step(self):
        time.sleep(0.001)
        return real_step(self)

    learner_type.step = slow_step  # the child inherits it; the parent never steps during the run
    try:
        finished = run_in_child(there, View(), stop.is_set, progress)
    finally:
        learner_type.step = real_step
    assert stop.is_set() and finished.reason is FinishReason.CANCELLED
    assert 0 < finished.done < 12_876 and finished.after_cancel >= 0
    here = Session.open(paths, Settings(target=60_000, tie_break=tie))
    assert here.step_many(finished.done) == finished.done
    assert there.learner.history == here.learner.history
    assert _state(there.learner) == _state(here.learner)
    _check_invariants(there.learner)
    for _ in range(3):
        assert there.step() == here.step()
    assert there.undo_to(finished.done // 2) == here.undo_to(finished.done // 2)
    assert _state(there.learner) == _state(here.learner)
    assert there.snapshot(View(doc=1)) == here.snapshot(View(doc=1))


def test_an_index_mixing_widths_and_lists_packs_to_its_positions():
    index = {7: np.array([1, 2], dtype=np.int32), 8: np.array([3], dtype=np.int64), 9: [4, 5], 10: []}
    keys, sizes, positions = flatchunks._pack(index, np.int32)
    assert keys.tolist() == [7, 8, 9, 10] and sizes.tolist() == [2, 1, 2, 0]
    assert positions.dtype == np.int32 and positions.tolist() == [1, 2, 3, 4, 5]
    back = flatchunks._unpack(keys, sizes, positions)
    assert {k: v.tolist() for k, v in back.items()} == {7: [1, 2], 8: [3], 9: [4, 5], 10: []}
    assert back[7].flags.writeable


def test_a_long_list_or_dict_in_pieces_comes_back_whole_and_in_order(monkeypatch):
    from tokworkbench.core import transfer

    monkeypatch.setattr(transfer, "PIECE", 3)
    counts = {(k * 7919) % 101: k for k in range(10)}
    heap = list(range(10, 0, -1))
    for value in (counts, heap, {}, []):
        got = pickle.loads(pickle.dumps(transfer.in_pieces(value)))
        assert got == value and list(got) == list(value) and built(transfer.in_pieces(value)) == value


@fork_only
def test_a_child_writes_its_own_copies_never_the_shared_arrays_its_parent_holds(monkeypatch):
    """After a forked run the store's arrays are views of shared memory; the next child must
    copy them before stepping, or a run that fails would leave the parent's store half
    changed (a failed run keeps the session as it was)."""
    from tokworkbench.core import transfer

    monkeypatch.setattr(transfer, "SMALL_BUFFER", 0)  # the samples' arrays are small
    paths = [str(p) for p in sample_paths()[:2]]
    session = Session.open(paths, Settings(target=400))
    assert run_in_child(session, View(), lambda: False, lambda report: None).reason is FinishReason.TARGET
    learner = session.learner
    base = learner._flat.ids
    while isinstance(base, np.ndarray):
        base = base.base
    assert isinstance(base.obj, mmap.mmap)  # a view of the transfer's shared memory
    session.undo_to(20)  # 124 steps to the target: the child fails at its 51st
    before = _state(learner)
    real_step, made = learner.step, []

    def failing():
        if len(made) == 50:
            raise RuntimeError("the child fails")
        made.append(1)
        return real_step()

    learner.step = failing  # the child inherits it; the parent never steps during the run
    try:
        finished = run_in_child(session, View(), lambda: False, lambda report: None)
    finally:
        del learner.step
    assert finished.reason is FinishReason.FAILED and "the child fails" in finished.error
    assert _state(learner) == before
    _check_invariants(learner)
