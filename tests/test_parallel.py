"""Cutting text where the presets always cut changes no chunk; parallel counts equal serial ones."""

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.text.parallel import count_parallel, cut_text, safe_cut

PRESETS = ("gpt2", "gpt4", "o200k")
# text rich in the characters the patterns treat specially around spaces
tricky = st.lists(st.sampled_from(list("ab AB 1 2\n\r\t'sdlt.,!?-/") + ["\u00a0", "\u3000", "é", "e\u0301",
                                                                       "日", "😀", "\u200d", "٣", "。", "\u0301",
                                                                       "\n\n", "\r\n", "Ⅻ", "ʰ", "\u1161"]),
                  max_size=200).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=tricky, parts=st.integers(1, 12))
def test_cut_text_changes_no_chunk(text, parts):
    pieces = cut_text(text, parts)
    assert "".join(pieces) == text
    for name in PRESETS:
        pre = pre_tokenizer(name)
        assert [c for p in pieces for c in pre.split(p)] == pre.split(text), name


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300))
def test_every_safe_cut_is_a_chunk_boundary_on_any_unicode(text):
    for name in PRESETS:
        pre = pre_tokenizer(name)
        bounds = set()
        pos = 0
        for chunk in pre.split(text):
            bounds.add(pos)
            pos += len(chunk)
        at = safe_cut(text, 0, len(text))
        while at != -1:
            assert at in bounds, (name, text, at)
            at = safe_cut(text, at + 1, len(text))


def test_text_without_spaces_is_cut_at_line_breaks_after_letters():
    text = "我们喜欢人工智能。\n今天天气很好\n\n明天123\n见"
    pieces = cut_text(text, 10)
    assert pieces == ["我们喜欢人工智能。\n今天天气很好", "\n\n明天123", "\n见"]
    for name in PRESETS:
        pre = pre_tokenizer(name)
        assert [c for p in pieces for c in pre.split(p)] == pre.split(text), name


def test_parallel_counts_equal_serial_in_first_appearance_order():
    words = ["alpha", "beta", "gamma", "δέλτα", "1234", "日本語", "😀x"]
    text = " ".join(words[(i * 7) % len(words)] + str(i % 13) for i in range(20000))
    docs = [text, "  leading spaces\n\n and more", text[:5000]]
    pre = pre_tokenizer("gpt4")
    serial: Counter = Counter()
    for d in docs:
        serial.update(pre.split(d))
    parallel = count_parallel(docs, pre, workers=2)
    assert parallel == serial and list(parallel) == list(serial)


def test_trainer_gives_the_same_merges_with_parallel_counting(monkeypatch):
    import tokworkbench.core.text.parallel as parallel

    text = " ".join(f"w{i % 97}x{i % 89} the cat sat" for i in range(30000))
    serial = Trainer([text], TrainConfig(pre_tokenizer=pre_tokenizer("gpt2"), tie_break="first"))
    monkeypatch.setattr(parallel, "MIN_PARALLEL", 1)
    par = Trainer([text], TrainConfig(pre_tokenizer=pre_tokenizer("gpt2"), tie_break="first"))
    assert par.chunk_strings == serial.chunk_strings
    assert [r.pair for r in par.run(merges=50)] == [r.pair for r in serial.run(merges=50)]


def test_layouts_built_piece_by_piece_name_the_right_chunks(monkeypatch):
    import tokworkbench.core.text.chunks as chunks

    monkeypatch.setattr(chunks, "PIECE", 500)  # many pieces per document
    docs = [" ".join(f"word{i % 37} 12{i % 5}45 тест{i % 3}" for i in range(3000)), "short doc", ""]
    seen = []
    t = Trainer(docs, TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), tie_break="first"), keep_layout=True,
                progress=seen.append)
    assert seen and seen[-1] == sum(len(d) for d in docs) and seen == sorted(seen)
    for doc, layout in zip(docs, t.layouts):
        assert "".join(t.chunk_strings[i] for i in layout.chunk_ids.tolist()) == doc
        starts = [0] + layout.ends.tolist()[:-1]
        assert [doc[a:b] for a, b in zip(starts, layout.ends.tolist())] == pre_tokenizer("gpt4").split(doc)
    plain = Trainer(docs, TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), tie_break="first"))
    assert plain.chunk_strings == t.chunk_strings


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=60), block=st.integers(1, 9))
def test_utf8_length_block_by_block_is_the_whole_encoding(text, block):
    from tokworkbench.core.text.chunks import utf8_length

    text = text.encode("utf-8", "replace").decode("utf-8")
    assert utf8_length(text, 1, block) == len(text.encode("utf-8"))


def test_a_lone_surrogate_is_named_at_its_offset_in_any_block():
    import pytest

    from tokworkbench.core.errors import CorpusError
    from tokworkbench.core.text.chunks import utf8_length

    with pytest.raises(CorpusError, match=r"document 3 holds a lone surrogate \(U\+DC00\) at offset 7"):
        utf8_length("日本語abcd\udc00xyz", 3, block=3)


def test_counting_spans_of_several_documents_across_workers(monkeypatch):
    import tokworkbench.core.text.parallel as parallel

    monkeypatch.setattr(parallel, "COUNT_PIECE", 50)  # many spans per document, split between workers
    docs = [" ".join(f"wörd{i % 31} {i}" for i in range(400)), "x", "", "тест " * 90]
    pre = pre_tokenizer("gpt4")
    serial: Counter = Counter()
    for d in docs:
        serial.update(pre.split(d))
    got = count_parallel(docs, pre, workers=3)
    assert got == serial and list(got) == list(serial)
