"""Counting files a block at a time (what `tokworkbench train` does) gives exactly what counting
each file whole gives: the same chunks in the same order, the same counts, characters and bytes,
whatever the block size, on one core or several (threads where counting is compiled, forked
processes where it is not); and the same errors, at the same offsets."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jitpaths import both_paths

import tokworkbench.core.text.blocks as blocks
from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.errors import CorpusError, InvalidUtf8Error
from tokworkbench.core.registry import modelfile
from tokworkbench.core.text.blocks import count_files, find_cut, plan_blocks
from tokworkbench.core.text.chunks import count_chunks
from tokworkbench.core.text.corpus import Skipped, iter_documents

jit_path = both_paths()
PRESETS = ("gpt2", "gpt4", "o200k")
# multi-byte characters of every width, CRLF, runs of spaces and breaks, marks that compose
# under NFC/NFKC, and long lines without any place to cut
tricky = st.lists(st.sampled_from(list("ab AB 1 2\n\r\t'sdlt.,!?-/ ") + [
    "  ", "\r\n", "\n\n", "\u00a0", "\u3000", "é", "e\u0301", "\u0301", "ﬁ", "日本語", "😀", "\u200d", "٣",
    "。", "\u2474", "Ⅻ", "ʰ", "\u1100\u1161", "x" * 40, "语" * 30, "🙂" * 12, " q" * 8]),
    max_size=120).map("".join)


def _whole(paths, normalizer, pre):
    return count_chunks([d.text for d in iter_documents(paths)], normalizer, pre)


def _same(a, b):
    assert a.chunks == b.chunks  # order of first appearance included
    assert a.counts.tolist() == b.counts.tolist()
    assert (a.documents, a.chars, a.bytes) == (b.documents, b.chars, b.bytes)


@settings(max_examples=150, deadline=None)
@given(texts=st.lists(tricky, min_size=1, max_size=3), block=st.integers(1, 48),
       normalizer=st.sampled_from(["none", "nfc", "nfkc"]), workers=st.sampled_from([1, 2, 3]))
def test_counting_in_blocks_equals_counting_each_file_whole(tmp_path_factory, texts, block, normalizer, workers):
    folder = tmp_path_factory.mktemp("b")
    paths = []
    for i, text in enumerate(texts):
        path = folder / f"{i}.txt"
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(blocks, "MIN_PARALLEL", 0 if workers > 1 else 1 << 40)  # parallel workers even here
        for name in PRESETS:
            pre = pre_tokenizer(name)
            _same(count_files(paths, normalizer, pre, workers=workers, block=block), _whole(paths, normalizer, pre))


@settings(max_examples=150, deadline=None)
@given(text=tricky, block=st.integers(1, 30), window=st.integers(1, 12), normalizer=st.sampled_from(["none", "nfkc"]))
def test_blocks_cover_the_file_and_cut_only_at_cuts(tmp_path_factory, text, block, window, normalizer):
    path = tmp_path_factory.mktemp("c") / "t.txt"
    data = text.encode("utf-8")
    path.write_bytes(data)
    saved = blocks._WINDOW
    blocks._WINDOW = window  # windows seam anywhere too
    try:
        planned = plan_blocks([(1, str(path), len(data))], normalizer, block)
    finally:
        blocks._WINDOW = saved
    bounds = [b.start for b in planned] + [planned[-1].stop]
    want = [0]  # the first cut at or after each nominal offset not already passed, on the whole data
    for nominal in range(block, len(data), block):
        if nominal > want[-1]:
            at = find_cut(data, nominal, normalizer)
            if at == -1:
                break
            want.append(at)
    assert bounds == want + [len(data)]


def test_cuts_fall_before_a_space_between_printable_ascii_or_a_break_after_a_letter():
    data = "a b\u00a0c 日 x  y z.\n语\n\u2474\n1\r\n".encode()
    text = data.decode()
    cuts, at = [], find_cut(data, 0)
    while at != -1:
        cuts.append(at)
        at = find_cut(data, at + 1)
    assert [text[len(data[:c].decode()) - 1] for c in cuts] == ["a", "y", "语", "\u2474", "1"]


def test_an_invalid_byte_in_a_later_block_is_named_at_its_offset_in_the_file(tmp_path):
    path = tmp_path / "bad.txt"
    data = ("word " * 200).encode() + b"ab\xffcd" + b" tail" * 50
    path.write_bytes(data)
    with pytest.raises(InvalidUtf8Error) as whole:
        _whole([path], "none", pre_tokenizer("gpt4"))
    with pytest.raises(InvalidUtf8Error) as blockwise:
        count_files([path], "none", pre_tokenizer("gpt4"), block=64)
    assert str(blockwise.value) == str(whole.value)
    assert "byte offset 1002" in str(blockwise.value)
    replaced = count_files([path], "none", pre_tokenizer("gpt4"), errors="replace", block=64)
    _same(replaced, count_chunks([d.text for d in iter_documents([path], "replace")], "none", pre_tokenizer("gpt4")))


def test_folders_binary_files_and_empty_files_read_as_the_whole_reader_reads_them(tmp_path):
    (tmp_path / "a.txt").write_text("one two three\n", encoding="utf-8")
    (tmp_path / "b.bin").write_bytes(b"\x00\x01binary")
    (tmp_path / "c.txt").write_text("", encoding="utf-8")
    (tmp_path / ".hidden").write_text("not read", encoding="utf-8")
    skipped, report = [], Skipped()
    got = count_files([tmp_path], "none", pre_tokenizer("gpt4"), skipped=skipped, report=report, block=4)
    _same(got, count_chunks([d.text for d in iter_documents([tmp_path], skipped=[])], "none", pre_tokenizer("gpt4")))
    assert got.documents == 2 and [p.rsplit("/", 1)[-1] for p in skipped] == ["b.bin"]
    assert report.lines() == ["skipped 1 binary file: " + str(tmp_path / "b.bin"),
                              "skipped 1 hidden file or folder: " + str(tmp_path / ".hidden")]
    with pytest.raises(CorpusError, match="looks like a binary file"):
        count_files([tmp_path / "b.bin"], "none", pre_tokenizer("gpt4"))


def test_a_custom_pattern_reads_each_file_whole(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("ab ab  cd\nab", encoding="utf-8")
    pre = pre_tokenizer("custom", r"\w+\s+\w+")  # matches across the places presets cut
    _same(count_files([path], "none", pre, block=1), _whole([path], "none", pre))


def test_train_on_the_command_line_equals_training_on_whole_documents(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(blocks, "MIN_PARALLEL", 0)  # the parallel, block-wise path on a small corpus
    monkeypatch.setattr(blocks, "MIN_BLOCK", 16)
    texts = [" ".join(f"wörd{i % 31} 日本{i % 7}\r\n{i}" for i in range(600)), "😀 short one\n", "plain text " * 90]
    for i, text in enumerate(texts):
        (tmp_path / f"{i}.txt").write_text(text, encoding="utf-8", newline="")
    out = tmp_path / "model.json"
    assert main(["train", *[str(tmp_path / f"{i}.txt") for i in range(3)], "--merges", "60", "-o", str(out)]) == 0
    model = modelfile.load(out)
    trainer = Trainer(texts, TrainConfig(pre_tokenizer=pre_tokenizer("gpt4")))
    assert [r.pair for r in trainer.run(merges=60)] == list(model.merges)
