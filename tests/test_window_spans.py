"""The trainer's window spans, read from its cells at once, are the chunk-by-chunk reference's."""

from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bpe.window import window_spans
from tokworkbench.core.inspection import segments
from tokworkbench.core.text.patterns import METASPACE

TEXT = st.text(alphabet="ab c\n日é👋\u0301-", max_size=160)


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(TEXT, min_size=1, max_size=3), units=st.sampled_from(["byte", "char"]),
       split=st.sampled_from(["gpt4", "none", METASPACE]), steps=st.integers(0, 40), undos=st.integers(0, 5),
       long=st.sampled_from([0, 3, 10**9]), data=st.data())
def test_window_spans_are_the_chunk_by_chunk_spans(docs, units, split, steps, undos, long, data):
    trainer = Trainer(docs, TrainConfig(units=units, pre_tokenizer=pre_tokenizer(split)), keep_layout=True)
    for _ in range(steps):
        trainer.step()
    for _ in range(undos):
        trainer.undo()
    doc = data.draw(st.integers(0, len(docs) - 1))
    length = len(trainer.layouts[doc].text)
    start = data.draw(st.integers(0, length))
    end = data.draw(st.integers(start, length + 3))
    kept, segments.LONG_CHUNK = segments.LONG_CHUNK, long  # long chunks are read where the window is
    try:
        expected = segments.corpus_spans(trainer, doc, start, end, origin=start)
        got = window_spans(trainer, doc, start, end, origin=start)
    finally:
        segments.LONG_CHUNK = kept
    assert got == expected
    assert all(type(s) is segments.TokenSpan for s in got)


def test_the_trainer_draws_its_window_from_its_cells():
    """A cut character (é, 日 and 👋 are several bytes) and the spans' ordinals, on a trained sample."""
    docs = ["日本語 and émoji 👋🏽 here.\nagain 日本 and again"] * 3
    trainer = Trainer(docs, TrainConfig(units="byte", pre_tokenizer=pre_tokenizer("gpt4")), keep_layout=True)
    for _ in range(12):
        trainer.step()
    start, text, spans, length = trainer.window(1, 2, 40)
    assert (start, text) == (2, docs[1][2:40]) and length == len(docs[1])
    assert spans == segments.corpus_spans(trainer, 1, 2, 40, origin=2)
    assert any(s.cut for s in spans) and [s.ordinal for s in spans] == list(range(len(spans)))
