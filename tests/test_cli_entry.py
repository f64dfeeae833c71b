"""The installed command leaves without the interpreter's teardown (cli.entry): what it must keep
is its output, its exit status and the exit handlers, which run before it goes."""

import subprocess
import sys

import pytest
from smallmodels import saved_bpe

from tokworkbench.core.gcpause import collector_paused, collector_running
from tokworkbench.core.registry.load import load_any

TEXT = "the cat sat on the mat with the hat " * 30


@pytest.fixture
def model(tmp_path):
    return saved_bpe(tmp_path / "m.json", TEXT, merges=10)


def entry(*argv: str) -> subprocess.CompletedProcess:
    """`tokworkbench ARGV` as the console script runs it, with an exit handler registered first."""
    code = ("import atexit, sys; atexit.register(print, 'handler ran', file=sys.stderr); "
            "from tokworkbench.cli import entry; sys.argv = ['tokworkbench', *sys.argv[1:]]; entry()")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)


def test_output_status_and_exit_handlers_survive_the_quick_exit(model):
    proc = entry("encode", "-m", str(model), "the cat sat")
    assert proc.returncode == 0
    assert [int(t) for t in proc.stdout.split()] == load_any(model).encode("the cat sat")
    assert proc.stderr == "handler ran\n"


def test_a_failing_command_keeps_its_status_and_its_line(tmp_path):
    proc = entry("encode", "-m", str(tmp_path / "absent.json"), "hi")
    assert proc.returncode == 1
    assert proc.stderr.startswith("tokworkbench: error: cannot read") and proc.stderr.endswith("handler ran\n")


def test_a_large_output_is_written_whole(model, tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("the mat\n" * 50_000, encoding="utf-8")
    proc = entry("encode", "-m", str(model), "-f", str(text))
    assert proc.returncode == 0
    assert len(proc.stdout.split()) == len(load_any(model).encode("the mat\n")) * 50_000


def test_a_command_runs_without_the_collector_and_a_screen_with_it(model):
    """The collector's passes cost a 10 MB training 0.3 s (core/gcpause.py); the workbench runs for
    hours, and keeps it."""
    code = ("import gc, sys; import tokworkbench.cli as cli; "
            "cli.main = lambda argv: print(argv[0], gc.isenabled()) or 0; "
            "sys.argv = ['tokworkbench', *sys.argv[1:]]; cli.entry()")
    for argv, shown in ((["encode", "-m", str(model), "x"], "encode False"), (["serve", "--help"], "serve True"),
                        (["sample_texts"], "app True")):
        proc = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
        assert (proc.returncode, proc.stdout.strip()) == (0, shown)


def test_the_cluster_client_runs_with_the_collector_on_and_leaves_it_as_it_was():
    import gc

    was = gc.isenabled()
    try:
        for before in (False, True):
            (gc.disable if not before else gc.enable)()
            with collector_running():
                assert gc.isenabled()
                with collector_paused():
                    assert not gc.isenabled()
                assert gc.isenabled()
            assert gc.isenabled() == before
    finally:
        (gc.enable if was else gc.disable)()



def test_a_profiled_run_leaves_the_usual_way_and_writes_its_profile(model, tmp_path):
    """cProfile writes its file after the program returns: the quick exit must not cut it off."""
    out = tmp_path / "p.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "tokworkbench", "encode", "-m",
                           str(model), "the cat"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.split()
    assert out.stat().st_size > 0
