"""The workbench's own command line: settings that reproduce a session, checked before the screen opens."""

import shlex

import pytest

from tokworkbench.app.labels import train_command
from tokworkbench.cli import build_parser, main
from tokworkbench.cli.app import app_settings
from tokworkbench.core.errors import PatternError
from tokworkbench.core.registry.kinds import unigram_sizes
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.session.snapshot import View


def settings_of(*argv):
    return app_settings(build_parser().parse_args(["app", *argv]))


def test_app_flags_become_the_sessions_settings():
    s = settings_of("--units", "char", "--split", "regex:\\w+|\\s+", "--normalize", "nfkc",
                    "--tie-break", "lexmin", "--target", "500", "--special", "<unk>")
    assert s == Settings(units="char", normalizer="nfkc", split="custom", pattern="\\w+|\\s+",
                         tie_break="lexmin", target=500, special_tokens=("<unk>",))
    assert settings_of() == Settings()


def test_the_train_command_shown_in_the_app_parses_back_to_the_same_settings():
    s = Settings(units="char", split="custom", pattern="\\w+|[^\\w\\s]+|\\s+", tie_break="hf", target=777)
    words = shlex.split(train_command(s).replace("PATH...", ""))[2:-2]  # drop the program, -o model.json
    args = build_parser().parse_args(["app", *[w.replace("--vocab-size", "--target") for w in words]])
    assert app_settings(args) == s


def test_roles_on_the_app_command_line_read_back_from_the_train_command():
    """The settings dialog shows `train … --bos '<s>'`; the app takes the same words, and a role's
    token becomes a special token as `train` makes it one."""
    s = settings_of("--bos", "<s>", "--eos", "</s>", "--special", "<pad>", "--pad", "<pad>")
    assert s.special_tokens == ("<pad>", "<s>", "</s>")
    assert dict(s.roles.items()) == {"bos": "<s>", "eos": "</s>", "pad": "<pad>"}
    words = shlex.split(train_command(s).replace("PATH...", ""))[2:-2]
    assert settings_of(*[w.replace("--vocab-size", "--target") for w in words]) == s
    assert dict(settings_of("--model", "unigram", "--unk", "<unk>").roles.items()) == {"unk": "<unk>"}


def test_roles_the_app_cannot_give_are_one_line(capsys):
    assert main(["--model", "unigram", "--bos", "<s>"]) == 1
    assert "'<s>' is not a special token" in capsys.readouterr().err
    assert main(["-m", "cl100k_base", "--eos", "</s>"]) == 1
    assert "keeps its own" in capsys.readouterr().err


def test_bad_app_flags_are_one_line_before_any_screen(capsys):
    assert main(["--split", "gpt5"]) == 1
    assert "did you mean gpt4" in capsys.readouterr().err
    assert main(["--split", "regex:(unclosed"]) == 1
    assert main(["/no/such/corpus"]) == 1
    assert "no such file or folder" in capsys.readouterr().err
    with pytest.raises(PatternError):
        settings_of("--split", "regex:(")


@pytest.mark.parametrize("argv", [["--bos=-bos-", "--eos", "</s>"], ["--special=-sep-"],
                                  ["--special=-sep-", "--pad=--pad--"]])
def test_a_token_that_begins_with_a_dash_reads_back_from_the_train_command(argv):
    """`--bos -x-` reads -x- as an option: the command shown writes such a value `--bos=-x-`."""
    s = settings_of(*argv)
    words = shlex.split(train_command(s).replace("PATH...", ""))[2:-2]
    assert settings_of(*[w.replace("--vocab-size", "--target") for w in words]) == s


async def test_the_readmes_unigram_command_trains_on_the_embedded_corpus():
    """`--model unigram --split metaspace` without sizes: the seed and the target are fitted to the
    corpus's characters by the rule the settings dialog uses, so the panes fill and r can run."""
    from recording import RecordingApp

    app = RecordingApp(None, settings_of("--model", "unigram", "--split", "metaspace"))
    async with app.run_test(size=(160, 48)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        session = app.main.session
        assert session is not None and not [s for s in app.said if "distinct characters" in s or "too small" in s]
        chars = session.stats.distinct_chars
        assert (session.settings.seed_size, session.settings.target) == unigram_sizes(chars) == (2900, 2200)
        assert session.learner.vocab_size > session.settings.target > chars
        assert session.snapshot(View()).next_rows  # the piece table has rows


def test_given_unigram_sizes_are_kept_and_bpe_is_never_fitted():
    assert settings_of("--model", "unigram", "--seed-size", "3000").fitted(1424) == \
        Settings(kind="unigram", seed_size=3000, target=2200)
    assert settings_of("--model", "unigram", "--target", "5000").fitted(1424).target == 5000
    assert settings_of().fitted(1424) == Settings()


def test_train_unigram_on_the_embedded_corpus_fits_its_seed(tmp_path, capsys):
    """The README's `train --model unigram --split metaspace` on the sample texts: the default
    seed (300) is below their 1,424 characters, so it grows by the workbench's rule."""
    out = tmp_path / "u.json"
    assert main(["train", "--model", "unigram", "--split", "metaspace", "--vocab-size", "2000", "-o", str(out)]) == 0
    assert "vocabulary 2901 -> " in capsys.readouterr().out and out.is_file()
    assert main(["train", "--model", "unigram", "--split", "metaspace", "--vocab-size", "2000",
                 "--seed-size", "300", "-o", str(out)]) == 1  # given, it is kept, and refused
    assert "--seed-size 300 is below" in capsys.readouterr().err


def test_the_workbench_without_a_terminal_is_one_line_not_a_spinning_process():
    """Started with its input or output not a terminal (a script, a pipe, cron), Textual read
    end-of-file in a loop at full CPU for ever; it says why and stops."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "tokworkbench"], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == ("tokworkbench: error: the workbench needs a terminal, and its input or output "
                                   "is not one; for scripts there are the commands (tokworkbench --help)")
