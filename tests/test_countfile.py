"""Count files: a round trip keeps every chunk, count, setting and order; training from one gives
exactly the merges that training from the text gives; damaged and foreign files are one line."""

import io
import json
import zipfile

import numpy as np
import pytest

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.errors import CountFileError
from tokworkbench.core.files.countfile import from_bytes, is_count_file, read_counts, to_bytes, write_counts
from tokworkbench.core.text.chunks import count_chunks
from tokworkbench.core.text.corpus import iter_documents
from tokworkbench.core.text.samples import sample_paths

TIE_BREAKS = ("first", "lexmin", "lexmax", "hf")


@pytest.fixture(scope="module")
def sample_texts():
    return [d.text for d in iter_documents(sample_paths())]


@pytest.mark.parametrize("split,normalizer", [("gpt4", "nfc"), ("o200k", "none"), ("none", "nfkc"),
                                              (r"regex:\w+|\s+", "none")])
def test_round_trip_keeps_chunks_counts_order_settings_and_summary(tmp_path, sample_texts, split, normalizer):
    from tokworkbench.core.text.pretokenize import parse_split

    pre = parse_split(split)
    counted = count_chunks(sample_texts, normalizer, pre)
    path = tmp_path / "counts.anything"  # the format does not depend on the name
    write_counts(path, counted, normalizer, pre)
    back, norm, pre2 = read_counts(path)
    assert back.chunks == counted.chunks and back.counts.tolist() == counted.counts.tolist()
    assert (back.documents, back.chars, back.bytes) == (counted.documents, counted.chars, counted.bytes)
    assert norm == normalizer and pre2 == pre and back.layouts is None
    assert is_count_file(path.read_bytes())


@pytest.mark.parametrize("units", ["byte", "char"])
@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_training_from_counts_gives_the_same_merges(tmp_path, capsys, units, tie_break):
    counts = tmp_path / "c.npz"
    assert main(["count", "--split", "gpt4", "--normalize", "nfc", "-o", str(counts)]) == 0
    a, b = tmp_path / "text.json", tmp_path / "counts.json"
    common = ["--units", units, "--tie-break", tie_break, "--merges", "120"]
    assert main(["train", "--split", "gpt4", "--normalize", "nfc", *common, "-o", str(a)]) == 0
    assert main(["train", "--from-counts", str(counts), *common, "-o", str(b)]) == 0
    ma, mb = json.loads(a.read_text()), json.loads(b.read_text())
    assert ma["merges"] == mb["merges"] and len(ma["merges"]) == 120
    assert ma["history"] == mb["history"] and ma.get("base") == mb.get("base")
    assert {k: v for k, v in ma.items() if k != "corpus"} == {k: v for k, v in mb.items() if k != "corpus"}


@pytest.mark.parametrize("tie_break", TIE_BREAKS)
def test_trainer_on_counted_equals_trainer_on_text_with_a_custom_pattern(sample_texts, tie_break):
    pre = pre_tokenizer(r"\p{L}+|\p{N}|[^\p{L}\p{N}]+")
    config = TrainConfig(units="char", normalizer="nfkc", pre_tokenizer=pre, tie_break=tie_break)
    back, norm, pre2 = from_bytes(to_bytes(count_chunks(sample_texts, "nfkc", pre), "nfkc", pre))
    direct = Trainer(sample_texts, config)
    counted = Trainer([], config, counted=back)
    assert list(direct.run(merges=80)) == list(counted.run(merges=80))


def test_counts_fix_split_and_normalize(tmp_path, capsys):
    counts = tmp_path / "c"
    assert main(["count", "--split", "gpt2", "-o", str(counts)]) == 0
    capsys.readouterr()
    out = str(tmp_path / "m.json")
    assert main(["train", "--from-counts", str(counts), "--split", "gpt4", "--merges", "5", "-o", out]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--split gpt4 conflicts" in err and "gpt2" in err
    assert main(["train", "--from-counts", str(counts), "--normalize", "nfkc", "--merges", "5", "-o", out]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--normalize nfkc conflicts" in err
    # the same settings given again are fine; PATHs as well as a count file are not
    assert main(["train", "--from-counts", str(counts), "--split", "gpt2", "--normalize", "none",
                 "--merges", "5", "-o", out]) == 0
    assert main(["train", str(sample_paths()[0]), "--from-counts", str(counts), "--merges", "5", "-o", out]) == 1
    assert "not both" in capsys.readouterr().err


def _npz(**arrays) -> bytes:
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def _damaged(good: bytes) -> list[tuple[str, bytes, str]]:
    with np.load(io.BytesIO(good)) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(arrays["header"].tobytes())

    def with_header(**changes):
        h = dict(header, **changes)
        return _npz(**dict(arrays, header=np.frombuffer(json.dumps(h).encode(), dtype=np.uint8)))

    dup = dict(arrays)
    ends = arrays["chunk_ends"]
    return [
        ("truncated", good[: len(good) // 2], "damaged"),
        ("not a zip", b'{"format": "tokworkbench", "version": 1}', "not a tokworkbench count file"),
        ("foreign npz", _npz(x=np.arange(3)), "not a tokworkbench count file"),
        ("wrong format", with_header(format="other"), "not a tokworkbench count file"),
        ("newer version", with_header(version=99), "version 99"),
        ("bad normalizer", with_header(normalizer="nfd"), "unknown normalizer"),
        ("pattern not the preset", with_header(pattern="\\w+"), "not that preset"),
        ("chunk count", with_header(chunks=1), "damaged"),
        ("negative summary", with_header(documents=-1), "corpus summary"),
        ("zero count", _npz(**dict(arrays, counts=np.zeros_like(arrays["counts"]))), "not positive"),
        ("ends past the bytes", _npz(**dict(arrays, chunk_ends=ends + 1)), "chunk ends"),
        ("pickled object", _npz(**dict(dup, counts=np.array([object()] * len(ends), dtype=object))), "damaged"),
    ]


def test_damaged_and_foreign_files_are_one_clear_line(tmp_path, sample_texts, capsys):
    pre = pre_tokenizer("gpt4")
    good = to_bytes(count_chunks(sample_texts[:3], "none", pre), "none", pre)
    for what, data, message in _damaged(good):
        path = tmp_path / "c.npz"
        path.write_bytes(data)
        with pytest.raises(CountFileError, match=message):
            read_counts(path)
        assert main(["train", "--from-counts", str(path), "--merges", "3", "-o", str(tmp_path / "m.json")]) == 1, what
        err = capsys.readouterr().err
        assert err.startswith("tokworkbench: error: ") and err.count("\n") == 1, (what, err)


def test_a_duplicated_chunk_is_refused():
    pre = pre_tokenizer("gpt4")
    from tokworkbench.core.text.chunks import ChunkCounts

    data = to_bytes(ChunkCounts(["a", "a"], np.array([1, 2]), 1, 2, 2), "none", pre)
    with pytest.raises(CountFileError, match="listed twice"):
        from_bytes(data)
    assert zipfile.is_zipfile(io.BytesIO(data))


def test_count_refuses_bad_outputs_before_work(tmp_path, capsys):
    src = tmp_path / "a.txt"
    src.write_text("hello world")
    assert main(["count", str(src), "-o", str(src)]) == 1
    assert "one of the inputs" in capsys.readouterr().err
    assert main(["count", str(src), "-o", str(tmp_path)]) == 1
    assert "not a regular file" in capsys.readouterr().err
    assert main(["count", str(tmp_path / "*.none"), "-o", str(tmp_path / "c")]) == 1
    assert "no file matches" in capsys.readouterr().err
    assert main(["count", str(tmp_path / "*.txt"), "-o", str(tmp_path / "c")]) == 0
    assert "counted 2 chunks, 2 distinct, in 1 document " in capsys.readouterr().out


def test_the_count_line_says_one_document_in_the_singular(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("one small file\n", encoding="utf-8")
    assert main(["count", str(tmp_path / "a.txt"), "-o", str(tmp_path / "c.npz")]) == 0
    assert " in 1 document (15 chars)" in capsys.readouterr().out


def test_a_metaspace_count_file_opens_as_metaspace_not_as_a_custom_pattern(tmp_path):
    """Metaspace rewrites the text before it cuts: taken for its cut pattern alone (a custom
    split), the session would count other chunks than the file holds."""
    from tokworkbench.core.files.countfile import write_counts
    from tokworkbench.core.session.session import Session
    from tokworkbench.core.session.settings import Settings
    from tokworkbench.core.text.chunks import count_chunks
    from tokworkbench.core.text.pretokenize import pre_tokenizer

    pre = pre_tokenizer("metaspace")
    path = tmp_path / "c.counts"
    write_counts(path, count_chunks(["hello world", "hello there"], "none", pre), "none", pre)
    session = Session.from_counts(path, Settings(kind="unigram", seed_size=40, target=30))
    assert (session.settings.split, session.settings.pattern) == ("metaspace", None)
    assert session.settings.pre_tokenizer() == pre
