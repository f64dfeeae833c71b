"""Unigram `em` sweeps in blocks and worker processes: the same model whatever the number of
workers, and block lattices that sweep like the whole corpus's."""

import os
import signal
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from tokworkbench.core.errors import WorkerError
from tokworkbench.core.text.parallel import can_fork
from tokworkbench.core.text.pretokenize import pre_tokenizer
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner, parallel_em
from tokworkbench.core.unigram.em import Lattices, PieceBlock, found_blocks, hash_strings, seed_pieces

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"


@pytest.fixture(scope="module")
def texts():
    return [p.read_text(encoding="utf-8") for p in sorted(SAMPLES.glob("*.txt"))]


def _train(texts, workers, monkeypatch):
    made = []
    original = parallel_em.BlockSweeps.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        self.workers = workers
        made.append(self)

    monkeypatch.setattr(parallel_em.BlockSweeps, "__init__", init)
    config = UnigramConfig(algorithm="em", seed_size=20_000, pre_tokenizer=pre_tokenizer("metaspace"))
    learner = UnigramLearner(texts, config)
    rows = list(learner.run(vocab_size=learner.base_size + 400))
    sweeps = made[0]
    pooled = sweeps._pool is not None
    sweeps.close()
    return learner, rows, pooled


@pytest.mark.skipif(not can_fork(), reason="workers are forked only where fork is the default")
def test_one_worker_and_two_give_bit_identical_models(texts, monkeypatch):
    one, rows_one, pooled_one = _train(texts, 1, monkeypatch)
    two, rows_two, pooled_two = _train(texts, 2, monkeypatch)
    assert not pooled_one and pooled_two  # the second run really went through a worker process
    assert len(rows_one) > 1
    assert one.state.pieces == two.state.pieces
    assert one.state.scores == two.state.scores  # bit for bit, not approximately
    assert one.state.freqs == two.state.freqs
    assert [(r.loss, r.tokens, r.removed) for r in rows_one] == [(r.loss, r.tokens, r.removed) for r in rows_two]


def test_blocks_partition_the_words_and_sweep_like_the_whole(texts):
    words = sorted(set(" ".join(texts).split()))[:400] + ["x" * 40]  # one long word: its own block's
    pieces = sorted(set("".join(words))) + ["th", "he", "the", "in", "ing", "an", "xx", "xxxx"]
    hashes, prefixes = hash_strings(pieces)
    whole = Lattices(words, hashes, prefixes, 4)
    rng = np.random.default_rng(0)
    weight = rng.integers(1, 5, len(words)).astype(np.float64)
    score = np.log(rng.uniform(0.01, 1.0, len(pieces)))
    blocks = parallel_em.cut_blocks(whole, weight)
    assert len(blocks) == parallel_em.BLOCKS
    assert sum(b.build().count for b in blocks) == len(words)
    counts, z = whole.forward_backward(score[whole.pid], weight)
    want = np.bincount(whole.pid, weights=counts, minlength=len(pieces))
    path, best = whole.viterbi(score[whole.pid])
    ids = np.arange(len(pieces))
    got = [b.run("expected", ids, score, len(pieces)).per_piece for b in blocks]
    np.testing.assert_allclose(sum(got), want, rtol=1e-12)
    swept = [b.run("best", ids, score, len(pieces)) for b in blocks]
    used = np.bincount(whole.pid[path], weights=weight[whole.word[path]], minlength=len(pieces))
    np.testing.assert_allclose(sum(s.per_piece for s in swept), used, rtol=1e-12)
    assert sum(s.tokens for s in swept) == weight[whole.word[path]].sum()
    assert sum(s.loss for s in swept) == pytest.approx(-float(np.dot(weight, best)), rel=1e-12)


def test_a_block_cut_to_fewer_pieces_sweeps_like_the_whole_cut_alike(texts):
    words = sorted(set(" ".join(texts).split()))[:300]
    pieces = sorted(set("".join(words))) + ["th", "he", "the", "in", "ing", "an", "on"]
    hashes, prefixes = hash_strings(pieces)
    whole = Lattices(words, hashes, prefixes, 3)
    weight = np.ones(len(words))
    score = np.log(np.linspace(0.05, 1.0, len(pieces)))
    blocks = parallel_em.cut_blocks(whole, weight)
    for drop in (["the"], ["the", "ing", "he"]):  # shrinking twice reuses the last cut
        keep = np.array([p not in drop for p in pieces])
        ids = np.flatnonzero(keep)
        cut = whole.restricted(keep)
        local = np.full(len(pieces), -1)
        local[ids] = np.arange(len(ids))
        counts, _ = cut.forward_backward(score[cut.pid], weight)
        want = np.bincount(local[cut.pid], weights=counts, minlength=len(ids))
        got = sum(b.run("expected", ids, score[ids], len(pieces)).per_piece for b in blocks)
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_blocks_built_from_the_seed_edges_are_the_whole_lattices_cut(texts):
    table_words = sorted(set(" ".join(texts).replace("\n", " ").split(" ")) - {""})
    words = ["\u2581" + w for w in table_words] + ["\u2581" + "ab" * 30]  # a long word too
    freqs = np.arange(1, len(words) + 1) % 7 + 1
    found: list = []
    pieces, _ = seed_pieces(words, freqs, 5_000, 8, edges=found)
    hashes, prefixes = hash_strings(pieces)
    whole = Lattices(words, hashes, prefixes, 8, found)
    blocks, edges = found_blocks(words, found, hashes, prefixes, 8)
    assert edges == len(whole.pid)
    assert sorted(np.concatenate([b for b, _ in blocks]).tolist()) == list(range(len(words)))
    for block, build in blocks:
        built, cut = build(), whole.words(block)
        for name in ("lens", "node_off", "word", "start", "end", "src", "dst", "pid", "back", "group_start",
                     "back_src", "back_dst", "back_start", "back_group_start"):
            np.testing.assert_array_equal(getattr(built, name), getattr(cut, name), err_msg=name)
        assert built.nodes == cut.nodes


def _small_sweeps(texts, workers):
    words = sorted(set(" ".join(texts).split()))[:2000]
    pieces = sorted(set("".join(words))) + ["th", "he", "the", "in", "ing", "an", "on", "er"]
    hashes, prefixes = hash_strings(pieces)
    whole = Lattices(words, hashes, prefixes, 3)
    weight = np.ones(len(words))
    blocks = [(b, partial(whole.words, b)) for b in
              parallel_em.partition(whole.lens, np.bincount(whole.word, minlength=whole.count))]
    ids = np.arange(len(pieces))
    score = np.log(np.linspace(0.05, 1.0, len(pieces)))
    return parallel_em.BlockSweeps(blocks, weight, len(pieces), len(whole.pid), workers), ids, score


@pytest.mark.skipif(not can_fork(), reason="workers are forked only where fork is the default")
def test_a_failed_sweep_ends_the_workers_and_the_next_one_starts_afresh(texts):
    alone, ids, score = _small_sweeps(texts, 1)
    want = alone.run("expected", ids, score).per_piece
    sweeps, _, _ = _small_sweeps(texts, 2)
    first = sweeps.run("expected", ids, score).per_piece
    pool = sweeps._pool
    with pytest.raises(ValueError):
        sweeps.run("nonsense", ids, score)
    assert sweeps._pool is None and not any(child.is_alive() for child, _ in pool.children)
    again = sweeps.run("expected", ids, score).per_piece
    sweeps.close()
    assert first.tolist() == want.tolist() == again.tolist()


@pytest.mark.skipif(not can_fork(), reason="workers are forked only where fork is the default")
def test_a_killed_worker_is_one_clear_error(texts):
    sweeps, ids, score = _small_sweeps(texts, 2)
    sweeps.run("best", ids, score)
    child, _ = sweeps._pool.children[0]
    os.kill(child.pid, signal.SIGKILL)
    child.join(timeout=5)
    with pytest.raises(WorkerError, match="died"):
        sweeps.run("best", ids, score)
    assert sweeps._pool is None


def _sweep_in_daemon(texts, send):
    sweeps, ids, score = _small_sweeps(texts, 2)
    try:
        send.send(("ok", sweeps.run("expected", ids, score).per_piece.tolist(), sweeps._pool is None))
    except BaseException as exc:
        send.send(("error", repr(exc), None))


@pytest.mark.skipif(not can_fork(), reason="workers are forked only where fork is the default")
def test_in_a_daemonic_process_the_blocks_are_swept_in_it(texts):
    """A session's training runs in a daemonic process, which may not start processes."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_sweep_in_daemon, args=(texts, send), daemon=True)
    child.start()
    kind, got, in_process = receive.recv()
    child.join(timeout=10)
    assert kind == "ok", got
    assert in_process
    alone, ids, score = _small_sweeps(texts, 1)
    assert got == alone.run("expected", ids, score).per_piece.tolist()


def test_the_pruning_pass_in_parts_finds_what_it_finds_in_one(texts):
    config = UnigramConfig(algorithm="em", seed_size=20_000, pre_tokenizer=pre_tokenizer("metaspace"))
    engine = UnigramLearner(texts[:2], config)._engine
    state = engine.seed()
    ids, scores = state.ids, np.asarray(state.scores)
    one = PieceBlock(engine, 0, 1).run(ids, scores)
    parts = [PieceBlock(engine, k, 4).run(ids, scores) for k in range(4)]
    assert sorted(one[0].tolist()) == sorted(np.concatenate([p[0] for p in parts]).tolist())
    assert len(one[0]) > 10

    def paths(alt_string, alt_piece):
        out: dict = {}
        for s, p in zip(alt_string.tolist(), alt_piece.tolist()):
            out.setdefault(s, []).append(p)
        return out

    assert paths(one[1], one[2]) == paths(np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]))
    # cut down to a smaller vocabulary: the same as built for it
    fewer = ids[: len(ids) * 3 // 4]
    fewer = np.union1d(fewer, ids[engine.single[ids]])
    again = PieceBlock(engine, 0, 1)
    again.run(ids, scores)
    where = {int(i): k for k, i in enumerate(ids.tolist())}
    fewer_scores = scores[[where[i] for i in fewer.tolist()]]
    cut = again.run(fewer, fewer_scores)
    fresh = PieceBlock(engine, 0, 1).run(fewer, fewer_scores)
    for a, b in zip(cut, fresh):
        assert a.tolist() == b.tolist()
