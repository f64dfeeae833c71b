"""Issue 28, files: an export of two files replaces both or neither; count files whose counts
or sizes would overflow or inflate are refused before anything is built; damaged readers' input
gives one line, never a traceback."""

import json
import os

import pytest

from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.errors import OutputError
from tokworkbench.core.formats import atomic
from tokworkbench.core.formats.atomic import TMP_TAG
from tokworkbench.core.formats.export import export
from tokworkbench.core.formats.load import load_any

TEXT = "the cat sat on the mat with the hat " * 30


def trained(merges: int):
    t = Trainer([TEXT], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=("<|eot|>",)))
    list(t.run(merges=merges))
    return t.tokenizer()


# -- item 5: a tiktoken pair is replaced whole or not at all -----------------------------------------
@pytest.fixture
def old_pair(tmp_path):
    out = tmp_path / "t.tiktoken"
    export(trained(5), "tiktoken", out)
    return out, {p: p.read_bytes() for p in (out, tmp_path / "t.tiktoken.json")}


def fail_on_call(monkeypatch, name: str, n: int):
    """os.NAME fails (ENOSPC) on its n-th call, as a full disk would."""
    real = getattr(os, name)
    calls = []

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) == n:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(os, name, failing)


def assert_old_pair_intact(out, before):
    assert {p: p.read_bytes() for p in before} == before
    assert not [p for p in os.listdir(out.parent) if TMP_TAG in p]
    tok = load_any(out)  # still a working pair
    assert tok.vocab_size == trained(5).vocab_size


@pytest.mark.parametrize("call", ["fsync", "replace"])
def test_a_tiktoken_export_that_fails_on_its_second_file_keeps_the_old_pair(old_pair, monkeypatch, call):
    out, before = old_pair
    fail_on_call(monkeypatch, call, 2)  # the second file's sync (a full disk) or its rename
    with pytest.raises(OutputError, match="No space left"):
        export(trained(15), "tiktoken", out)
    monkeypatch.undo()
    assert_old_pair_intact(out, before)


def test_a_new_pair_that_fails_on_its_second_rename_leaves_no_first_file(tmp_path, monkeypatch):
    out = tmp_path / "new.tiktoken"
    fail_on_call(monkeypatch, "replace", 2)
    with pytest.raises(OutputError):
        export(trained(15), "tiktoken", out)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_a_tiktoken_export_that_succeeds_replaces_both(old_pair):
    out, before = old_pair
    export(trained(15), "tiktoken", out)
    assert load_any(out).vocab_size == trained(15).vocab_size
    assert sorted(os.listdir(out.parent)) == ["t.tiktoken", "t.tiktoken.json"]
    assert json.loads((out.parent / "t.tiktoken.json").read_bytes())["ranks_sha256"]
