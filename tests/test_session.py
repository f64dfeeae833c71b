"""The headless session: the verbs the app and the tests share, without a screen."""

import pytest

from tokworkbench.core.errors import ExportError, TrainingError
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.session.childrun import run_in_child
from tokworkbench.core.session.session import FinishReason, Session
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import View
from tokworkbench.core.text.samples import sample_paths


@pytest.fixture(scope="module")
def paths():
    return [str(p) for p in sample_paths()[:4]]


def drain(steps):
    reports = []
    while True:
        try:
            reports.append(next(steps))
        except StopIteration as stop:
            return reports, stop.value


def test_step_undo_and_snapshot_follow_the_learner(paths):
    s = Session.open(paths, Settings(target=400))
    first = s.snapshot()
    assert first.steps == 0 and first.next_step == (first.next_rows[0].left, first.next_rows[0].right)
    record = s.step()
    assert record.pair == first.next_step
    snap = s.snapshot(View(doc=1, start=10, size=200))
    assert snap.steps == 1 and snap.history[-1].record == record
    assert snap.window.doc == 1 and snap.window.start == 10 and len(snap.window.text) == 200
    assert snap.total_tokens == first.total_tokens - record.replacements
    assert s.step_many(5) == 5 and s.steps == 6
    assert s.undo().step == 6 and s.undo_all() == 5 and s.steps == 0
    again = s.snapshot()
    assert (again.total_tokens, again.next_rows) == (first.total_tokens, first.next_rows)


def test_run_reaches_the_target_and_says_why(paths):
    s = Session.open(paths, Settings(target=300))
    reports, finished = drain(s.run(frame=0))
    assert finished.reason is FinishReason.TARGET and finished.done == 300 - 256
    assert s.snapshot().vocab_size == 300
    assert [r.done for r in reports] == list(range(1, 45))


def test_cancel_stops_between_two_steps(paths):
    s = Session.open(paths, Settings(target=2000))
    calls = []
    finished = drain(s.run(cancelled=lambda: len(calls) > 3 or calls.append(1)))[1]
    assert finished.reason is FinishReason.CANCELLED and finished.done == 4 and s.steps == 4


def test_a_forked_run_leaves_the_session_as_an_in_process_run_does(paths):
    here = Session.open(paths, Settings(target=500, tie_break="hf"))
    drain(here.run())
    there = Session.open(paths, Settings(target=500, tie_break="hf"))
    seen = []
    finished = run_in_child(there, View(), lambda: False, seen.append)
    assert finished.reason is FinishReason.TARGET and finished.done == 500 - 256
    assert there.learner.history == here.learner.history
    assert there.snapshot(View(doc=2)) == here.snapshot(View(doc=2))
    assert there.undo() == here.undo() and there.step() == here.step()


def test_unsaved_follows_save_and_further_steps(paths, tmp_path):
    s = Session.open(paths, Settings())
    assert not s.unsaved
    s.step()
    assert s.unsaved
    written = s.save(tmp_path / "m.json")
    assert not s.unsaved and load_any(written).merges == tuple(s.learner.merges)
    s.step()
    assert s.unsaved
    s.undo()
    assert not s.unsaved


def test_a_target_below_the_base_is_refused_and_kept(paths):
    s = Session.open(paths, Settings(target=700))
    with pytest.raises(TrainingError, match="below the base vocabulary"):
        s.set_target(100)
    assert s.settings.target == 700


def test_export_is_checked_before_writing(paths, tmp_path):
    s = Session.open(paths, Settings(units="char"))
    s.step()
    with pytest.raises(ExportError, match="byte-level only"):
        s.check_export("tiktoken")
    assert not (tmp_path / "t.tiktoken").exists()
    assert "wrote" in s.export("hf", tmp_path / "t.json")[-1]


def test_replay_stops_at_the_end_of_the_replayed_merges(paths, tmp_path):
    donor = Session.open(paths, Settings())
    donor.step_many(30)
    model_path = donor.save(tmp_path / "donor.json")
    s = Session.open(paths[:2], Settings(target=1000))
    s.step_many(3)
    assert s.replay(load_any(model_path), str(model_path)) == 3
    assert s.snapshot().replaying == 30
    reports, finished = drain(s.run())
    assert finished.reason is FinishReason.REPLAYED and finished.done == 30
    assert s.learner.merges == donor.learner.merges


def test_changing_settings_builds_a_new_session_on_the_same_corpus(paths):
    s = Session.open(paths, Settings())
    t = s.with_settings(Settings(units="char", tie_break="lexmin"))
    assert t.corpus is s.corpus and t.snapshot().base_size == t.stats.distinct_chars


def test_the_pair_filter_searches_the_whole_table_as_text_and_as_hex_bytes(paths):
    s = Session.open(paths, Settings())
    learner = s.learner
    everything, total = learner.next_rows(10**9)
    assert total == len(everything) > 400

    def brute(needle: bytes):
        return [(r.left, r.right) for r in everything if needle in r.merged_bytes]

    for query, needle in [("ex", b"ex"), ("x", b"x"), ("é", "é".encode()), ("e6", bytes([0xE6])),
                          ("\\xe6\\x97", bytes([0xE6, 0x97])), ("E6 97", bytes([0xE6, 0x97]))]:
        rows, matching = learner.next_rows(5, query)
        expected = brute(needle) if query not in ("e6",) else sorted(
            set(brute(needle)) | set(brute(b"e6")), key=[(r.left, r.right) for r in everything].index)
        assert matching == len(expected) and [(r.left, r.right) for r in rows] == expected[:5], query
    snap = s.snapshot(View(row_filter="ex"))
    assert snap.rows_in_all == len(brute(b"ex")) and all(b"ex" in r.merged_bytes for r in snap.next_rows)
    assert not any(b"\\x" in r.merged_bytes for r in s.snapshot(View(row_filter="x")).next_rows)


def test_the_compression_curve_and_the_token_lengths_follow_the_history(paths):
    s = Session.open(paths, Settings())
    assert s.snapshot().curve == [] and s.snapshot().token_lengths[1] == 256
    s.step_many(30)
    learner = s.learner
    snap = s.snapshot()
    full = [learner.initial_tokens / r.length for r in learner.history]
    assert snap.curve == full and len(learner.compression_curve(7)) <= 8
    assert learner.compression_curve(7)[-1] == full[-1]
    assert sum(snap.token_lengths) == 256 + 30
    assert snap.token_lengths == [sum(1 for t in learner.vocab if len(t) == n)
                                  for n in range(len(snap.token_lengths))]


def test_changing_units_or_tie_break_reuses_the_counts_and_trains_the_same(paths):
    s = Session.open(paths, Settings())
    for new in (Settings(tie_break="lexmax"), Settings(units="char", tie_break="hf"), Settings(target=5000)):
        t = s.with_settings(new)
        assert t.learner.chunk_table is s.learner.chunk_table
        fresh = Session.open(paths, new)
        assert t.step_many(20) == fresh.step_many(20) and t.learner.history == fresh.learner.history
        assert t.snapshot(View(doc=3)) == fresh.snapshot(View(doc=3))
    assert s.snapshot() == Session.open(paths, Settings()).snapshot()  # the shared counts were not touched
    assert s.with_settings(Settings(split="gpt2")).learner.chunk_table is not s.learner.chunk_table
    assert s.with_settings(Settings(normalizer="nfkc")).learner.chunk_table is not s.learner.chunk_table


def test_the_history_exports_as_csv(paths, tmp_path):
    import csv

    s = Session.open(paths, Settings())
    s.step_many(12)
    rows = list(csv.DictReader(open(s.export_history(tmp_path / "h.csv"), encoding="utf-8")))
    assert [int(r["step"]) for r in rows] == list(range(1, 13))
    for row, record in zip(rows, s.learner.history):
        assert (int(row["left"]), int(row["right"])) == record.pair and int(row["new_id"]) == record.new_id
        assert bytes.fromhex(row["token_hex"].replace(" ", "")) == s.learner.token_bytes(record.new_id)
        assert int(row["tokens_after"]) == record.length and int(row["count"]) == record.count
