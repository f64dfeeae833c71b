"""Issue 10, data loss: `-o` never damages what it points at, and never overwrites an input.

Checked before any work: a refused output costs no training run. Writes go through symlinks,
refuse devices, FIFOs, folders and hard-linked files, keep the replaced file's mode and owner,
use the umask for a new file, and leave findable temp files that the next write cleans up.
"""

import json
import os
import signal
import stat
import subprocess
import sys

import pytest
from smallmodels import saved_bpe

from tokworkbench.cli import main
from tokworkbench.core.errors import OutputError
from tokworkbench.core.files import atomic
from tokworkbench.core.files.atomic import TMP_TAG, check_output, remove_stale_temps, write_atomic
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.session.settings import Settings

TEXT = "the cat sat on the mat with the hat " * 30


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text(TEXT, encoding="utf-8")
    return path


@pytest.fixture
def model(tmp_path):
    return saved_bpe(tmp_path / "m.json", TEXT, merges=10, special_tokens=("<|eot|>",))


def run_cli(argv, capsys):
    """Exit status and stderr lines of an in-process run."""
    status = main([str(a) for a in argv])
    err = capsys.readouterr().err
    return status, [line for line in err.splitlines() if line]


def assert_one_line_error(argv, capsys, match):
    status, err = run_cli(argv, capsys)
    assert status == 1, err
    assert len(err) == 1 and err[0].startswith("tokworkbench: error: "), err
    assert match in err[0], err[0]
    return err[0]


def no_training(monkeypatch):
    """Make training fail loudly: a refused output must be refused before it starts."""
    def boom(*args, **kwargs):
        raise AssertionError("training ran before the output was checked")
    monkeypatch.setattr(Settings, "learner", boom)


# -- devices, FIFOs, folders ---------------------------------------------------------------------
def test_a_character_device_is_refused_and_left_a_device(tmp_path, corpus, capsys, monkeypatch):
    dev = tmp_path / "null"
    try:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a private /dev/null
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here ({exc.strerror}); needs root")
    no_training(monkeypatch)
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", dev], capsys, "it is a character device")
    assert stat.S_ISCHR(os.stat(dev).st_mode)


@pytest.mark.parametrize("dev", ["/dev/null", "/dev/full"])
def test_system_devices_are_refused_without_touching_them(corpus, model, capsys, monkeypatch, dev):
    if not os.path.exists(dev) or not stat.S_ISCHR(os.stat(dev).st_mode):
        pytest.skip(f"no character device at {dev}")
    before = os.stat(dev)
    assert_one_line_error(["export", "-m", model, "--format", "hf", "-o", dev], capsys, "character device")
    no_training(monkeypatch)
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", dev], capsys, "character device")
    after = os.stat(dev)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_a_fifo_and_a_folder_are_refused(tmp_path, corpus, capsys, monkeypatch):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    no_training(monkeypatch)
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", fifo], capsys, "it is a FIFO")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", tmp_path], capsys, "it is a folder")


def test_dev_stdout_on_a_pipe_is_refused(tmp_path, corpus):
    if not os.path.exists("/dev/stdout"):
        pytest.skip("no /dev/stdout on this system")
    proc = subprocess.run([sys.executable, "-m", "tokworkbench", "train", str(corpus), "--merges", "2",
                           "-o", "/dev/stdout"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith("tokworkbench: error: refusing to write /dev/stdout: it is a FIFO")


# -- symlinks and hard links ---------------------------------------------------------------------
def test_a_symlink_is_written_through(tmp_path, model):
    target = tmp_path / "real.json"
    target.write_text("old", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    tok = load_any(model)
    modelfile.save(tok, link)
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert load_any(target) == tok


def test_a_dangling_symlink_creates_its_target(tmp_path, model):
    link = tmp_path / "link.json"
    link.symlink_to("made.json")
    modelfile.save(load_any(model), link)
    assert link.is_symlink() and (tmp_path / "made.json").is_file()


def test_a_symlink_loop_says_so(tmp_path, model):
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    with pytest.raises(OutputError, match="symlink loop"):
        modelfile.save(load_any(model), tmp_path / "a")


def test_a_hard_linked_file_is_refused_and_both_names_keep_it(tmp_path, model):
    one = tmp_path / "one.json"
    one.write_text("keep", encoding="utf-8")
    os.link(one, tmp_path / "two.json")
    with pytest.raises(OutputError, match="2 hard links"):
        modelfile.save(load_any(model), one)
    assert one.read_text() == (tmp_path / "two.json").read_text() == "keep"
    assert os.stat(one).st_ino == os.stat(tmp_path / "two.json").st_ino


# -- modes, owners, umask --------------------------------------------------------------------
def test_the_replaced_file_keeps_its_mode(tmp_path, model):
    out = tmp_path / "out.json"
    out.write_text("old", encoding="utf-8")
    os.chmod(out, 0o640)
    modelfile.save(load_any(model), out)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o640


def test_the_replaced_file_keeps_its_owner(tmp_path, model):
    if os.geteuid() != 0:
        pytest.skip("only root can give a file to another owner")
    out = tmp_path / "out.json"
    out.write_text("old", encoding="utf-8")
    os.chown(out, 1234, 5678)
    modelfile.save(load_any(model), out)
    st = os.stat(out)
    assert (st.st_uid, st.st_gid) == (1234, 5678)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_a_new_file_gets_the_umask_not_0600(tmp_path, model, mask):
    old = os.umask(mask)
    try:
        path = write_atomic(tmp_path / f"new-{mask:o}.json", b"{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o666 & ~mask


def test_a_full_disk_leaves_the_old_file_and_no_temp(tmp_path, model, monkeypatch):
    out = tmp_path / "out.json"
    out.write_text("old", encoding="utf-8")

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    with pytest.raises(OutputError, match="cannot write .*out.json: No space left on device"):
        modelfile.save(load_any(model), out)
    monkeypatch.undo()
    assert out.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "out.json"]


# -- temp files ----------------------------------------------------------------------------------
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temp_files_are_named_and_stale_ones_removed(tmp_path):
    host = atomic._host()
    stale = tmp_path / f".m.json{TMP_TAG}{host}-{_dead_pid()}-abcd1234"
    alive = tmp_path / f".m.json{TMP_TAG}{host}-{os.getppid()}-abcd1234"
    elsewhere = tmp_path / f".m.json{TMP_TAG}otherhost-{_dead_pid()}-abcd1234"
    for p in (stale, alive, elsewhere):
        p.write_bytes(b"half a model")
    write_atomic(tmp_path / "m.json", b"{}")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert stale.name not in left and alive.name in left and elsewhere.name in left
    assert "m.json" in left
    assert remove_stale_temps(tmp_path) == []


def test_a_killed_writer_leaves_a_temp_file_that_names_itself(tmp_path):
    """kill -9 during the write: the temp file says whose it is, and the next write removes it."""
    code = ("import os, signal, sys; from tokworkbench.core.files import atomic\n"
            "def die(*a): os.kill(os.getpid(), signal.SIGKILL)\n"
            "atomic.os.replace = die\n"
            f"atomic.write_atomic({str(tmp_path / 'm.json')!r}, b'data')\n")
    proc = subprocess.Popen([sys.executable, "-c", code])
    assert proc.wait() == -signal.SIGKILL
    temps = [p.name for p in tmp_path.iterdir()]
    assert len(temps) == 1 and temps[0].startswith(f".m.json{TMP_TAG}") and f"-{proc.pid}-" in temps[0]
    write_atomic(tmp_path / "m.json", b"{}")
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]


# -- outputs that are inputs ---------------------------------------------------------------------
def test_train_refuses_to_write_over_its_corpus(tmp_path, corpus, capsys, monkeypatch):
    no_training(monkeypatch)
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", corpus], capsys, "it is one of the inputs")
    link = tmp_path / "other-name.json"
    link.symlink_to(corpus)
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", link], capsys, f"the same file as {corpus}")
    assert corpus.read_text(encoding="utf-8") == TEXT


def test_train_refuses_a_file_inside_an_input_folder(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(TEXT, encoding="utf-8")
    no_training(monkeypatch)
    assert_one_line_error(["train", folder, "--merges", "2", "-o", folder / "a.txt"], capsys, "one of the inputs")


def test_export_refuses_to_write_over_its_model(tmp_path, model, capsys):
    before = model.read_bytes()
    assert_one_line_error(["export", "-m", model, "--format", "hf", "-o", model], capsys, "one of the inputs")
    assert model.read_bytes() == before


def test_tiktoken_companion_never_overwrites_the_source_model(tmp_path, model, capsys):
    before = model.read_bytes()
    out = tmp_path / "m"  # its companion is m.json: the source model
    assert_one_line_error(["export", "-m", model, "--format", "tiktoken", "-o", out], capsys,
                          "refusing to write")
    assert model.read_bytes() == before and not out.exists()


def test_export_from_tiktoken_refuses_its_own_companion(tmp_path, model, capsys):
    export(load_any(model), "tiktoken", tmp_path / "t.tiktoken")
    side = tmp_path / "t.tiktoken.json"
    before = side.read_bytes()
    assert_one_line_error(["export", "-m", tmp_path / "t.tiktoken", "--format", "hf", "-o", side], capsys,
                          "one of the inputs")
    assert side.read_bytes() == before


def test_check_output_compares_inodes_not_names(tmp_path, corpus, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputError, match="one of the inputs"):
        check_output("./c.txt", [corpus])
    assert check_output(tmp_path / "new.json", [corpus]) == tmp_path / "new.json"


# -- -o checked first ----------------------------------------------------------------------------
def test_a_missing_output_folder_is_reported_before_training(tmp_path, corpus, capsys, monkeypatch):
    no_training(monkeypatch)
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", tmp_path / "nowhere" / "m.json"], capsys,
                          "the folder does not exist")


def test_an_output_name_over_255_bytes_is_one_line(tmp_path, corpus, capsys, monkeypatch):
    no_training(monkeypatch)
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", tmp_path / ("y" * 300)], capsys,
                          "cannot write")
    assert_one_line_error(["train", corpus, "--merges", "2", "-o", tmp_path / ("y" * 300) / "m.json"], capsys,
                          "cannot write")


# -- standard output -----------------------------------------------------------------------------
def test_a_full_stdout_is_an_error(model):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "tokworkbench", "encode", "-m", str(model), "hello"],
                              stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1
    assert proc.stderr == "tokworkbench: error: cannot write to standard output: No space left on device\n"


def test_a_closed_stdout_is_an_error_not_a_silent_success(model):
    proc = subprocess.run(["sh", "-c", f'"{sys.executable}" -m tokworkbench encode -m "{model}" hello >&-'],
                          stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1
    assert proc.stderr == "tokworkbench: error: cannot write to standard output: it is closed\n"


def test_a_closed_stdout_stops_training_before_it_starts(tmp_path, corpus):
    proc = subprocess.run(["sh", "-c", f'"{sys.executable}" -m tokworkbench train "{corpus}" --merges 2 '
                                       f'-o "{tmp_path / "m.json"}" >&-'], stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1 and "standard output: it is closed" in proc.stderr
    assert not (tmp_path / "m.json").exists()


def test_exports_still_load_after_the_checks(tmp_path, model):
    """The checks refuse only what they must: the usual exports still work end to end."""
    assert main(["export", "-m", str(model), "--format", "tiktoken", "-o", str(tmp_path / "t.tiktoken")]) == 0
    assert main(["export", "-m", str(tmp_path / "t.tiktoken"), "--format", "hf", "-o",
                 str(tmp_path / "hf.json")]) == 0
    assert json.loads((tmp_path / "hf.json").read_text(encoding="utf-8"))["model"]["type"] == "BPE"
    assert load_any(tmp_path / "hf.json").merges == load_any(model).merges
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
