"""Issue 10, hangs and silence on input: only regular files are read, never past a limit, and a
folder walk says what it passed over."""

import os
import subprocess
import sys

import pytest
from smallmodels import saved_bpe

from tokworkbench.cli import main
from tokworkbench.core import CorpusError, ModelFileError, load_corpus
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text import corpus as corpus_module
from tokworkbench.core.text.corpus import Skipped, iter_documents, read_regular

TEXT = "the cat sat on the mat with the hat " * 30


def run_cli(argv, capsys):
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, [line for line in captured.err.splitlines() if line], captured.out


def one_line_error(argv, capsys, match):
    status, err, _ = run_cli(argv, capsys)
    assert status == 1 and len(err) == 1 and err[0].startswith("tokworkbench: error: "), err
    assert match in err[0], err[0]


@pytest.fixture
def model(tmp_path):
    return saved_bpe(tmp_path / "m.json", TEXT, merges=5)


def device(path):
    if not os.path.exists(path):
        pytest.skip(f"no {path} on this system")
    return path


# -- devices and FIFOs ---------------------------------------------------------------------------
@pytest.mark.parametrize("dev", ["/dev/zero", "/dev/urandom"])
def test_a_device_is_not_read_as_a_corpus_a_model_or_a_file(dev, tmp_path, model, capsys):
    device(dev)
    one_line_error(["train", dev, "--merges", "1", "-o", tmp_path / "o.json"], capsys, "character device")
    one_line_error(["inspect", dev], capsys, "it is a character device; a model file must be a regular file")
    one_line_error(["encode", "-m", model, "-f", dev], capsys, "character device")
    one_line_error(["encode", "-m", dev, "x"], capsys, "character device")


def test_a_fifo_corpus_is_refused_at_once_instead_of_hanging(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "tokworkbench", "train", str(fifo), "--merges", "1",
                           "-o", str(tmp_path / "o.json")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr == f"tokworkbench: error: cannot read {fifo}: it is a FIFO (named pipe); " \
                          "a corpus file must be a regular file\n"


def test_reading_stops_at_the_limit(tmp_path):
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 5000)
    with pytest.raises(CorpusError, match=r"big\.txt is 4\.9 KiB; a corpus file may be at most 4 KiB"):
        read_regular(big, 4096, "corpus file")
    assert read_regular(big, 5000) == b"x" * 5000
    with pytest.raises(ModelFileError, match="a model file may be at most"):
        read_regular(big, 100, "model file", ModelFileError)


def test_a_model_file_over_its_limit_is_refused(tmp_path, monkeypatch):
    from tokworkbench.core.files import limits

    path = tmp_path / "big.json"
    path.write_bytes(b" " * 2000 + b"{}")
    monkeypatch.setattr(limits.read_model_file, "__defaults__", (1000,))
    with pytest.raises(ModelFileError, match="may be at most 1000 bytes"):
        load_any(path)


def test_encode_reads_standard_input_with_a_dash(model):
    proc = subprocess.run([sys.executable, "-m", "tokworkbench", "encode", "-m", str(model), "-f", "-",
                           "--format", "tokens"], input="the cat", capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == '"the" " c" "at"\n', proc.stderr


# -- names that are not files --------------------------------------------------------------------
def test_a_symlink_loop_says_so(tmp_path, capsys):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(CorpusError, match="symlink loop"):
        load_corpus([tmp_path / "a"])
    one_line_error(["inspect", tmp_path / "a"], capsys, "symlink loop")
    one_line_error(["train", tmp_path / "a", "--merges", "1", "-o", tmp_path / "o.json"], capsys, "symlink loop")


def test_a_dangling_symlink_names_its_target(tmp_path):
    (tmp_path / "link").symlink_to("gone.txt")
    with pytest.raises(CorpusError, match="a symlink to gone.txt, which does not exist"):
        load_corpus([tmp_path / "link"])


def test_a_path_segment_over_255_bytes_is_one_line(tmp_path, model, capsys):
    long = tmp_path / ("x" * 300)
    one_line_error(["train", long, "--merges", "1", "-o", tmp_path / "o.json"], capsys, "too long")
    one_line_error(["inspect", long], capsys, "too long")
    one_line_error(["encode", "-m", model, "-f", long], capsys, "too long")
    one_line_error(["encode", "-m", long, "x"], capsys, "too long")


# -- what a folder walk passes over --------------------------------------------------------------
def make_folder(root):
    root.mkdir()
    (root / "a.txt").write_text(TEXT, encoding="utf-8")
    (root / ".hidden.txt").write_text("secret", encoding="utf-8")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("x", encoding="utf-8")
    (root / "b.bin").write_bytes(b"\x00\x01")
    os.mkfifo(root / "pipe")
    (root / "dangling").symlink_to("nowhere.txt")
    (root / "sub").mkdir()
    (root / "sub" / "c.txt").write_text("more text", encoding="utf-8")
    (root / "locked").mkdir()
    (root / "locked" / "d.txt").write_text("unseen", encoding="utf-8")
    (root / "linked").symlink_to(root / "sub")
    return root


def simulate_unreadable(monkeypatch, folder):
    """Root reads any folder, so an unreadable one is simulated where os.scandir is called."""
    real = os.scandir

    def scandir(path):
        if os.fspath(path) == os.fspath(folder):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(corpus_module.os, "scandir", scandir)


def test_a_walk_counts_every_kind_it_skips(tmp_path, monkeypatch):
    root = make_folder(tmp_path / "corpus")
    simulate_unreadable(monkeypatch, root / "locked")
    corpus = load_corpus([root])
    assert sorted(os.path.basename(d.name) for d in corpus.documents) == ["a.txt", "c.txt"]
    seen = corpus.passed_over
    assert sorted(map(os.path.basename, seen.hidden)) == [".git", ".hidden.txt"]
    assert list(map(os.path.basename, seen.binary)) == ["b.bin"] == list(map(os.path.basename, corpus.skipped))
    assert list(map(os.path.basename, seen.special)) == ["pipe"]
    assert list(map(os.path.basename, seen.broken_links)) == ["dangling"]
    assert list(map(os.path.basename, seen.unreadable)) == ["locked"]
    assert list(map(os.path.basename, seen.linked_folders)) == ["linked"]


def test_a_really_unreadable_folder_is_counted(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads every folder; the simulated case covers this")
    root = tmp_path / "corpus"
    (root / "locked").mkdir(parents=True)
    (root / "a.txt").write_text(TEXT, encoding="utf-8")
    os.chmod(root / "locked", 0)
    try:
        report = Skipped()
        list(iter_documents([root], report=report))
        assert report.unreadable == [str(root / "locked")]
    finally:
        os.chmod(root / "locked", 0o755)


def test_train_reports_one_line_per_kind(tmp_path, monkeypatch, capsys):
    root = make_folder(tmp_path / "corpus")
    simulate_unreadable(monkeypatch, root / "locked")
    status, err, out = run_cli(["train", root, "--merges", "2", "-o", tmp_path / "m.json"], capsys)
    assert status == 0, err
    kinds = [line.split(":")[1].strip() for line in err]
    assert kinds == ["skipped 1 binary file", "skipped 2 hidden files or folders",
                     "skipped 1 special file (FIFO, device or socket)", "skipped 1 unreadable folder",
                     "skipped 1 broken symlink", "skipped 1 symlinked folder (not followed)"], err
    assert out.startswith("trained 2 merges")


def test_a_folder_of_only_skipped_entries_says_what_it_held(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    (root / ".hidden").write_text("x", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"folder holds no files \(skipped 1 hidden file or folder"):
        load_corpus([root])
