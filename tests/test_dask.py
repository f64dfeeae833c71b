"""Counting on a real Dask cluster equals counting here: the same chunks in the same order, the
same counts, so the same merges for every tie-break; a killed worker changes nothing; every
failure is one line. The byte-range rule is property-tested against counting the whole text."""

import functools
import os
import signal
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")

import cloudpickle  # noqa: E402
import dask  # noqa: E402
from distributed import LocalCluster  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tokworkbench.cli import main  # noqa: E402
from tokworkbench.core import pre_tokenizer  # noqa: E402
from tokworkbench.core.files.countfile import read_counts  # noqa: E402
from tokworkbench.core.text.blocks import find_cut  # noqa: E402
from tokworkbench.core.text.chunks import count_chunks  # noqa: E402
from tokworkbench.core.text.corpus import iter_documents, list_files  # noqa: E402
from tokworkbench.core.text.samples import sample_paths  # noqa: E402
from tokworkbench.engines.dask_count import (  # noqa: E402
    Shard,
    count_dask,
    count_range,
    merge_counts,
    plan,
    shards_of,
)

cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers cannot import tests/
TIE_BREAKS = ("first", "lexmin", "lexmax", "hf")
PRESETS = ("gpt2", "gpt4", "o200k")
tricky = st.lists(st.sampled_from(list("ab AB 1 2\n\r\t'sdlt.,!?-/ ") + ["  ", "\u00a0", "\u3000", "é", "e\u0301",
                                                                       "\u00a8", "ﬁ", "日", "😀", "\u200d", "٣",
                                                                       "。", "\u2474", "\u203e", "\u1100\u1161",
                                                                       "\u1161", "Ⅻ", "ʰ", "\r\n", "\u0301"]),
                  max_size=200).map("".join)


def _local(paths, normalizer, pre):
    return count_chunks([d.text for d in iter_documents(paths)], normalizer, pre)


def _same(a, b):
    assert a.chunks == b.chunks  # order of first appearance included
    assert a.counts.tolist() == b.counts.tolist()
    assert (a.documents, a.chars, a.bytes) == (b.documents, b.chars, b.bytes)


# -- the byte-range rule, without a cluster ------------------------------------------------------
@settings(max_examples=150, deadline=None)
@given(text=tricky, task_bytes=st.integers(1, 40), normalizer=st.sampled_from(["none", "nfc", "nfkc"]))
def test_byte_ranges_count_to_the_whole_text(tmp_path_factory, text, task_bytes, normalizer):
    path = tmp_path_factory.mktemp("r") / "t.txt"
    path.write_bytes(text.encode("utf-8"))
    shard = Shard(str(path), str(path), path.stat().st_size)
    for name in PRESETS:
        pre = pre_tokenizer(name)
        parts = [count_range(s, a, b, normalizer, pre) for s, a, b in plan([shard], pre, task_bytes)]
        merged = functools.reduce(merge_counts, parts)
        whole = count_chunks([text], normalizer, pre)
        assert list(merged[0]) == whole.chunks and list(merged[0].values()) == whole.counts.tolist()
        assert (merged[1], merged[2]) == (whole.chars, whole.bytes)


def test_cuts_fall_before_a_space_between_printable_ascii_or_a_break_after_a_letter():
    data = "a b\u00a0c 日 x  y z.\n语\n\u2474\n1\r\n".encode()
    text = data.decode()

    def before_cuts(normalizer):
        return [text[len(data[:c].decode()) - 1] for c in _all_cuts(data, normalizer)]

    assert before_cuts("none") == ["a", "y", "语", "\u2474", "1"]  # not after "z." nor inside "\r\n"
    assert before_cuts("nfkc") == ["a", "y", "语", "1"]  # NFKC makes ⑴ "(1)": punctuation would take the break


def _all_cuts(data, normalizer):
    cuts, at = [], find_cut(data, 0, normalizer)
    while at != -1:
        cuts.append(at)
        at = find_cut(data, at + 1, normalizer)
    return cuts


@settings(max_examples=300, deadline=None)
@given(text=tricky, offset=st.integers(0, 900), window=st.integers(1, 12),
       normalizer=st.sampled_from(["none", "nfkc"]))
def test_a_cut_found_through_small_windows_is_the_first_cut_in_the_whole(text, offset, window, normalizer):
    import io

    from tokworkbench.core.text import blocks

    data = text.encode("utf-8")
    saved = blocks._WINDOW
    blocks._WINDOW = window
    try:
        got = blocks.cut_in_file(io.BytesIO(data), offset, len(data), normalizer)
    finally:
        blocks._WINDOW = saved
    want = find_cut(data, offset, normalizer) if offset > 0 else 0
    assert got == (len(data) if want == -1 else want)


# -- on a cluster --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cluster():
    with dask.config.set({"distributed.scheduler.allowed-failures": 3,
                          "distributed.comm.timeouts.connect": "10s"}):
        with LocalCluster(n_workers=2, processes=True, threads_per_worker=1, host="127.0.0.1",
                          dashboard_address=None, silence_logs=40) as c:
            yield c.scheduler_address


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Several shards, one over the CLI's smallest task size so it is cut into byte ranges."""
    folder = tmp_path_factory.mktemp("corpus")
    words = ["alpha", "beta", "Gamma", "δέλτα", "1234", "日本語", "😀x", "don't", "e\u0301t\u00e9", "ﬁne", "--", "\n\n"]
    for k, n in enumerate((3000, 250_000, 40)):
        body = " ".join(words[(i * 7 + k) % len(words)] + str(i % (13 + k)) for i in range(n))
        (folder / f"shard-{k}.txt").write_text(body, encoding="utf-8")
    (folder / "sub").mkdir()
    (folder / "sub" / "z.txt").write_text("zeta eta theta " * 500, encoding="utf-8")
    return folder


@pytest.mark.parametrize("split,normalizer", [("gpt4", "none"), ("o200k", "nfkc"), ("gpt2", "nfc"),
                                              (r"regex:\w+|\s+", "none")])
def test_cluster_counts_equal_local_counts(cluster, corpus, split, normalizer):
    from tokworkbench.core.text.pretokenize import parse_split

    pre = parse_split(split)
    for paths in (sample_paths(), [corpus]):
        shards = shards_of(list_files(paths))
        got = count_dask(shards, normalizer, pre, cluster, task_bytes=20_000, show_progress=False)
        _same(got, _local(paths, normalizer, pre))


@pytest.mark.parametrize("units", ["byte", "char"])
def test_merges_from_cluster_counts_equal_a_local_run_for_every_tie_break(cluster, corpus, tmp_path, capsys, units):
    for paths in ([str(p) for p in sample_paths()], [str(corpus / "shard-*.txt"), str(corpus / "sub")]):
        counts = tmp_path / "c.npz"
        assert main(["count", *paths, "--engine", "dask", "--scheduler", cluster, "--task-mb", "1",
                     "-o", str(counts)]) == 0
        local = tmp_path / "l.npz"
        assert main(["count", *paths, "-o", str(local)]) == 0
        _same(read_counts(counts)[0], read_counts(local)[0])
        for tie_break in TIE_BREAKS:
            a, b = tmp_path / "a.json", tmp_path / "b.json"
            common = ["--units", units, "--tie-break", tie_break, "--merges", "60"]
            text_paths = _expand(paths)
            assert main(["train", *text_paths, *common, "-o", str(a)]) == 0
            assert main(["train", "--from-counts", str(counts), *common, "-o", str(b)]) == 0
            assert a.read_text() == b.read_text(), (tie_break, units)
    capsys.readouterr()


def _expand(paths):
    import glob

    return [q for p in paths for q in (sorted(glob.glob(p)) if "*" in p else [p])]


def _kill_once(marker: str, shard, start):
    """In a worker: the first task past a shard's start kills its own worker process."""
    if start > 0 and not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), signal.SIGKILL)


def test_a_worker_killed_mid_task_is_retried_and_changes_nothing(cluster, corpus, tmp_path):
    marker = tmp_path / "killed"
    pre = pre_tokenizer("gpt4")
    shards = shards_of(list_files([corpus]))
    got = count_dask(shards, "none", pre, cluster, task_bytes=50_000, show_progress=False,
                     hook=functools.partial(_kill_once, str(marker)))
    assert marker.exists()  # a worker really died
    _same(got, _local([corpus], "none", pre))


# -- failures are one line -----------------------------------------------------------------------
def _fails(capsys, argv, *needles):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("tokworkbench: error: ") and err.count("\n") == 1, err
    for n in needles:
        assert n in err, err


def test_shard_failures_are_one_line(cluster, tmp_path, capsys):
    out = str(tmp_path / "c.npz")
    dask_args = ["--engine", "dask", "--scheduler", cluster, "--task-mb", "1", "-o", out]
    good = tmp_path / "good.txt"
    good.write_text("fine text " * 10)
    _fails(capsys, ["count", str(good), str(tmp_path / "missing.txt"), *dask_args], "missing.txt", "no such file")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _fails(capsys, ["count", str(good), str(fifo), *dask_args], "pipe", "FIFO")
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    _fails(capsys, ["count", str(loop), *dask_args], "loop", "symlink loop")
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(("word " * 500_000).encode() + "café".encode("latin-1") + b" more")
    _fails(capsys, ["count", str(good), str(bad), *dask_args], "latin1.txt", "not valid UTF-8 at byte offset 2500003",
           "--replace-invalid")
    assert not os.path.exists(out)


def test_a_scheduler_that_is_not_there_is_one_line(tmp_path, capsys):
    import socket

    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    good = tmp_path / "good.txt"
    good.write_text("fine text")
    _fails(capsys, ["count", str(good), "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
                    "-o", str(tmp_path / "c")], "cannot reach the Dask scheduler", f"127.0.0.1:{port}")
    _fails(capsys, ["count", str(good), "--engine", "dask", "-o", str(tmp_path / "c")], "needs --scheduler")


def test_progress_goes_to_stderr_and_changes_nothing(cluster, capsys):
    pre = pre_tokenizer("gpt4")
    got = count_dask(shards_of(list_files(sample_paths())), "none", pre, cluster, task_bytes=20_000,
                     show_progress=True)
    out, err = capsys.readouterr()
    assert out == "" and "100% Completed" in err
    _same(got, _local(sample_paths(), "none", pre))


# -- shards named by URL (fsspec) ----------------------------------------------------------------
def test_url_shards_count_like_the_local_files(cluster, corpus, tmp_path, capsys):
    """`file://` goes through fsspec on the client and on both worker processes: a folder URL and
    a glob URL give exactly the counts of the same local paths."""
    urls = [corpus.as_uri() + "/shard-*.txt", (corpus / "sub").as_uri()]
    got, local = tmp_path / "u.npz", tmp_path / "l.npz"
    assert main(["count", *urls, "--engine", "dask", "--scheduler", cluster, "--task-mb", "1", "-o", str(got)]) == 0
    assert main(["count", str(corpus / "shard-*.txt"), str(corpus / "sub"), "-o", str(local)]) == 0
    _same(read_counts(got)[0], read_counts(local)[0])
    capsys.readouterr()


def test_a_filesystem_other_than_the_os_is_read_through_fsspec():
    """memory:// lives in this process, so a cluster of threads here reads it: the shards, cut
    into byte ranges, count to exactly the text's chunks."""
    import fsspec
    from distributed import Client

    from tokworkbench.engines.remote import list_urls

    fs = fsspec.filesystem("memory")
    texts = {"/tw-test/b.txt": "second shard, with 日本語 and don't " * 300,
             "/tw-test/a.txt": "first shard here " * 400, "/tw-test/.hidden": "never counted"}
    for path, text in texts.items():
        fs.pipe(path, text.encode())
    try:
        files = list_urls(["memory://tw-test"])
        assert [f for f, _ in files] == ["memory:///tw-test/a.txt", "memory:///tw-test/b.txt"]
        pre = pre_tokenizer("gpt4")
        with Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as client:
            got = count_dask(shards_of(files), "none", pre, client, task_bytes=1000, show_progress=False)
        want = count_chunks([texts["/tw-test/a.txt"], texts["/tw-test/b.txt"]], "none", pre)
        _same(got, want)
    finally:
        fs.rm("/tw-test", recursive=True)


def test_url_failures_are_one_line(cluster, tmp_path, capsys):
    out = str(tmp_path / "c.npz")
    dask_args = ["--engine", "dask", "--scheduler", cluster, "-o", out]
    _fails(capsys, ["count", "nosuch://bucket/x.txt", *dask_args], "Protocol not known: nosuch")
    _fails(capsys, ["count", (tmp_path / "absent.txt").as_uri(), *dask_args], "absent.txt", "no such file")
    _fails(capsys, ["count", tmp_path.as_uri() + "/*.none", *dask_args], "no file matches")
    _fails(capsys, ["count", "memory://x/y.txt", "-o", out], "--engine dask")
    assert not os.path.exists(out)
