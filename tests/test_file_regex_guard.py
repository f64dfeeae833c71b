"""Every regex a file brings runs under the pre-tokenizer's timeout (issue 28, item 10): an HF
normalizer's Replace pattern that backtracks without end was killed at 100 s on 41 characters,
and froze the app."""

import json

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st

from tokworkbench.cli import main
from tokworkbench.core.errors import PatternTimeoutError
from tokworkbench.core.formats.hf_unigram import write_hf
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text import pretokenize
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner

CATASTROPHIC = "(a|aa)+$"  # the regex module sees through (a+)+$; not through this
STUCK = "a" * 41 + "!"


@pytest.fixture
def quick_timeout(monkeypatch):
    monkeypatch.setattr(pretokenize, "PATTERN_TIMEOUT", 0.3)  # the guard's 5 s, made short for the test


@pytest.fixture
def replace_file(tmp_path):
    """A Unigram tokenizer.json whose normalizer replaces a catastrophic pattern."""
    learner = UnigramLearner(["aaa bbb aab ab ba! a!"], UnigramConfig(seed_size=30))
    path = tmp_path / "tokenizer.json"
    write_hf(learner.model(), path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Replace", "pattern": {"Regex": CATASTROPHIC}, "content": "x"}]}
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_backtracking_normalizer_replace_is_stopped_by_the_guard(replace_file, quick_timeout):
    model = load_any(str(replace_file))
    assert model.encode("ab ba") == model.encode("ab ba")  # what matches quickly still works
    with pytest.raises(PatternTimeoutError, match="takes too long"):
        model.encode(STUCK)


def test_the_cli_says_so_in_one_line(replace_file, quick_timeout, capsys):
    assert main(["encode", "-m", str(replace_file), STUCK]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "takes too long" in err[0]


def test_a_backtracking_split_pattern_from_a_file_is_stopped_too(tmp_path, quick_timeout):
    from tokworkbench.core.text.pretokenize import from_pattern

    with pytest.raises(PatternTimeoutError):
        from_pattern(CATASTROPHIC).split(STUCK)


@given(st.sampled_from([" {2,}", "a+", "x*", "", r"\b", "(?<=a)", "[ab]|c"]), st.text("abc x"), st.text("_-"))
def test_guarded_sub_is_regex_sub_with_a_literal_content(pattern, text, content):
    from tokworkbench.core.text.pretokenize import guarded_sub

    compiled = regex.compile(pattern)
    assert guarded_sub(compiled, content, text) == compiled.sub(lambda _: content, text)
