"""Bad input gets one clear error and loses nothing."""

import json
import os
import subprocess
import sys

import pytest

from tokworkbench.cli import main
from tokworkbench.core import (
    CorpusError,
    DecodeError,
    EncodeError,
    ModelFileError,
    PatternError,
    TrainConfig,
    Trainer,
    TrainingError,
    load_corpus,
    pre_tokenizer,
)
from tokworkbench.core.errors import OutputError
from tokworkbench.core.registry import modelfile
from tokworkbench.core.text.corpus import iter_documents


def test_non_utf8_file_names_file_and_offset(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\u00e9 ok".encode("latin-1"))
    with pytest.raises(CorpusError, match=r"latin1\.txt: not valid UTF-8 at byte offset 3 \(byte 0xe9\)"):
        load_corpus([bad])
    corpus = load_corpus([bad], errors="replace")
    assert corpus.documents[0].text == "caf\ufffd ok"


def test_binary_file_named_is_an_error_but_skipped_in_a_folder(tmp_path):
    (tmp_path / "a.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "b.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    with pytest.raises(CorpusError, match="binary file"):
        load_corpus([tmp_path / "b.bin"])
    corpus = load_corpus([tmp_path])
    assert [os.path.basename(d.name) for d in corpus.documents] == ["a.txt"]
    assert corpus.skipped == [str(tmp_path / "b.bin")]


def test_empty_corpus_and_empty_folders(tmp_path):
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    with pytest.raises(CorpusError, match="empty"):
        load_corpus([tmp_path / "empty.txt"])
    with pytest.raises(CorpusError, match="no corpus"):
        load_corpus([])
    d = tmp_path / "d"
    d.mkdir()
    with pytest.raises(CorpusError, match="holds no files"):
        list(iter_documents([d]))
    (d / "x.bin").write_bytes(b"\x00\x01")
    with pytest.raises(CorpusError, match="no text files"):
        list(iter_documents([d], skipped=[]))
    with pytest.raises(CorpusError, match="no such file"):
        load_corpus([tmp_path / "missing.txt"])


@pytest.mark.parametrize("units", ["byte", "char"])
def test_a_lone_surrogate_from_the_api_is_named(units):
    with pytest.raises(CorpusError, match=r"document 2 holds a lone surrogate \(U\+D800\) at offset 2"):
        Trainer(["fine", "ab\ud800cd"], TrainConfig(units=units))


def test_invalid_regex_names_the_problem():
    with pytest.raises(PatternError, match=r"invalid pre-tokenizer regex '\(\?<x': missing > at position 4"):
        pre_tokenizer("(?<x")


def test_custom_regex_keeps_text_between_matches():
    assert pre_tokenizer(r"\d+").split("ab12cd3") == ["ab", "12", "cd", "3"]
    assert pre_tokenizer(r"(a)(b)?").split("xab") == ["x", "ab"]  # groups do not change chunks


@pytest.mark.parametrize("size", [0, 1, 255, 256 + 1 - 2])
def test_vocab_sizes_that_make_no_sense(size):
    t = Trainer(["hello"], TrainConfig(special_tokens=("<a>", "<b>")))
    with pytest.raises(TrainingError, match="below the base vocabulary"):
        t.steps_for_vocab(size)


def test_settings_that_make_no_sense():
    with pytest.raises(TrainingError):
        TrainConfig(units="word")
    with pytest.raises(TrainingError):
        TrainConfig(tie_break="random")
    with pytest.raises(TrainingError):
        TrainConfig(normalizer="nfd")
    with pytest.raises(TrainingError):
        TrainConfig(special_tokens=("<a>", "<a>"))
    t = Trainer(["hello"], TrainConfig())
    with pytest.raises(TrainingError):
        list(t.run(merges=-1))
    with pytest.raises(TrainingError):
        list(t.run())


def test_ids_out_of_range_and_strict_decoding():
    tok = Trainer(["héllo"], TrainConfig()).model()
    with pytest.raises(DecodeError, match=r"id 256 at position 1 is out of range.*0\.\.255"):
        tok.decode([104, 256])
    with pytest.raises(DecodeError, match="-1"):
        tok.decode([-1])
    with pytest.raises(DecodeError, match="byte offset 1"):
        tok.decode([104, 0xC3])
    assert tok.decode([104, 0xC3], errors="replace") == "h\ufffd"


def test_special_tokens_follow_tiktoken_rule():
    tok = Trainer(["hello world"], TrainConfig(special_tokens=("<|endoftext|>",))).model()
    eot = tok.special_ids["<|endoftext|>"]
    assert eot == 256
    with pytest.raises(EncodeError, match="special token '<\\|endoftext\\|>' at offset 5"):
        tok.encode("hello<|endoftext|>")
    ids = tok.encode("hello<|endoftext|>", allowed_special="all")
    assert ids[-1] == eot and tok.decode(ids) == "hello<|endoftext|>"
    assert eot not in tok.encode_ordinary("hello<|endoftext|>")
    with pytest.raises(EncodeError, match="not a special token"):
        tok.encode("x", allowed_special={"<bos>"})


def test_corrupt_and_foreign_model_files(tmp_path):
    p = tmp_path / "m.json"
    p.write_text("{not json", encoding="utf-8")
    with pytest.raises(ModelFileError, match="not valid JSON"):
        modelfile.load(p)
    p.write_text(json.dumps({"model": {"type": "BPE"}}), encoding="utf-8")
    with pytest.raises(ModelFileError, match="not a tokworkbench model"):
        modelfile.load(p)
    good = modelfile.to_json(Trainer(["abab"], TrainConfig()).model())
    for field, value, msg in [
        ("version", 99, "version 99"),
        ("merges", [[0, 999]], "merge 0"),
        ("units", "word", "units"),
        ("special_tokens", {"<x>": 3}, "special token ids"),
        ("merges", "nope", "'merges' must be a list"),
    ]:
        p.write_text(json.dumps({**good, field: value}), encoding="utf-8")
        with pytest.raises(ModelFileError, match=msg):
            modelfile.load(p)
    p.write_bytes(b"\xff\xfe")
    with pytest.raises(ModelFileError):
        modelfile.load(p)


def test_model_file_round_trip_and_atomic_write(tmp_path):
    t = Trainer(["low lower lowest", "new newer"], TrainConfig(units="char", special_tokens=("<unk>", "<pad>")))
    list(t.run(merges=5))
    tok = t.model()
    p = tmp_path / "m.json"
    modelfile.save(tok, p)
    assert modelfile.load(p) == tok
    before = p.read_bytes()
    with pytest.raises(OutputError, match="the folder does not exist"):
        modelfile.save(tok, tmp_path / "missing-dir" / "m.json")
    assert p.read_bytes() == before
    assert sorted(x.name for x in tmp_path.iterdir()) == ["m.json"]  # no temp file left behind


def test_cli_errors_are_one_line_without_traceback(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok \xff")
    runs = [
        ["train", str(bad), "--merges", "1", "-o", str(tmp_path / "m.json")],
        ["train", str(tmp_path), "--split", "regex:(unclosed", "--merges", "1", "-o", str(tmp_path / "m.json")],
        ["train", "--vocab-size", "10", "-o", str(tmp_path / "m.json")],
        ["inspect", str(bad)],
    ]
    for argv in runs:
        proc = subprocess.run([sys.executable, "-m", "tokworkbench", *argv], capture_output=True, text=True)
        assert proc.returncode == 1, argv
        assert proc.stderr.startswith("tokworkbench: error: ") and proc.stderr.count("\n") == 1, proc.stderr
        assert "Traceback" not in proc.stderr


def test_cli_decode_rejects_non_ids(tmp_path, capsys):
    m = tmp_path / "m.json"
    assert main(["train", "--merges", "3", "-o", str(m)]) == 0
    assert main(["decode", "-m", str(m), "12", "x1"]) == 1
    assert "'x1' is not an id" in capsys.readouterr().err


def test_one_escaping_rule_everywhere(tmp_path, capsys):
    """The byte view, inspect and the regex error write \\xe6 and \\w once, as the tables do."""
    from tokworkbench.core.inspection.escape import quote

    assert quote(b"\xe6".decode("utf-8", errors="backslashreplace")) == "'\\xe6'"
    with pytest.raises(PatternError) as caught:
        pre_tokenizer("custom", r"(\w+")
    assert "'(\\w+'" in str(caught.value) and "\\\\w" not in str(caught.value)
    model = tmp_path / "m.json"
    assert main(["train", "--units", "byte", "--split", "none", "--merges", "3", "-o", str(model),
                 str(_write(tmp_path / "c.txt", "日本日本日本"))]) == 0
    capsys.readouterr()
    assert main(["inspect", str(model)]) == 0
    shown = capsys.readouterr().out
    assert "'\\xe6'" in shown and "\\\\x" not in shown


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_a_special_token_in_the_text_is_named_where_it_first_occurs():
    from tokworkbench.core import TrainConfig, Trainer

    trainer = Trainer(["hi there"], TrainConfig(special_tokens=("<s>", "</s>")))
    with pytest.raises(EncodeError, match="special token '<s>' at offset 0"):
        trainer.model().encode("<s>hi</s>")
    with pytest.raises(EncodeError, match="special token '</s>' at offset 2"):
        trainer.model().encode("hi</s><s>")
