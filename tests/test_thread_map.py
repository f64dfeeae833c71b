"""thread_map, the threads compiled counting runs on: a thread cannot be killed as a forked
worker is, so a failing share or ctrl+c sets `stop` and the other shares end at their next step
instead of finishing their work; the first real exception is the one raised."""

import threading

import pytest

from tokworkbench.core.errors import StoppedShare
from tokworkbench.core.text.parallel import thread_map

STEPS = 2_000  # far more than a stopped share gets to


def _steps(stop: threading.Event, done: list, limit: int = STEPS) -> None:
    for _ in range(limit):
        if stop.is_set():
            raise StoppedShare("another share failed")
        done.append(1)
        stop.wait(0.001)


def test_the_results_come_in_share_order():
    assert thread_map(lambda share, stop: share * 2, [1, 2, 3]) == [2, 4, 6]
    assert thread_map(lambda share, stop: share, [7]) == [7]


def test_a_failing_share_stops_the_others_and_its_error_is_raised():
    done = {0: [], 2: []}

    def work(share, stop):
        if share == 1:
            raise ValueError("share 1 is damaged")
        _steps(stop, done[share])

    with pytest.raises(ValueError, match="share 1 is damaged"):
        thread_map(work, [0, 1, 2])
    assert len(done[0]) < STEPS and len(done[2]) < STEPS  # neither finished its share


def test_an_interrupt_in_this_thread_stops_the_other_shares():
    done, started = [], threading.Event()

    def work(share, stop):
        if share == 0:
            started.wait(5)
            raise KeyboardInterrupt
        started.set()
        _steps(stop, done)

    with pytest.raises(KeyboardInterrupt):
        thread_map(work, [0, 1])
    assert len(done) < STEPS


def test_counting_a_share_gives_up_at_its_next_piece_once_stopped(tmp_path):
    from tokworkbench.core.text.blocks import count_blocks, plan_blocks, text_files
    from tokworkbench.core.text.corpus import Skipped
    from tokworkbench.core.text.pretokenize import pre_tokenizer

    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat\n" * 1000, encoding="utf-8")
    blocks = plan_blocks(text_files([str(corpus)], None, Skipped()), "none", 1 << 18)
    stop = threading.Event()
    counts = count_blocks(blocks, "none", pre_tokenizer("gpt2"), stop=stop)[0]
    assert (counts["the"], counts[" the"]) == (1000, 1000)
    stop.set()
    with pytest.raises(StoppedShare):
        count_blocks(blocks, "none", pre_tokenizer("gpt2"), stop=stop)
