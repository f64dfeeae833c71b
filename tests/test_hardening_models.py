"""Issue 10, malformed model files: each is one line from the CLI with exit status 1, an error of
our class from the API, and a token too long to build is refused before it is built."""

import json
import os
import shutil

import pytest

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.errors import ForeignModelError, ModelFileError, TokenLimitError, TokWorkbenchError
from tokworkbench.core.formats.tiktoken import companion_path, tiktoken_encoding
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import export
from tokworkbench.core.registry.load import load_any

TEXT = "the cat sat on the mat with the hat " * 30


@pytest.fixture(scope="module")
def tok():
    t = Trainer([TEXT], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=("<|eot|>",)))
    list(t.run(merges=12))
    return t.model()


@pytest.fixture
def files(tmp_path, tok):
    """A valid file of each format, to damage."""
    modelfile.save(tok, tmp_path / "m.json")
    export(tok, "hf", tmp_path / "hf.json")
    export(tok, "tiktoken", tmp_path / "t.tiktoken")
    export(tok, "minbpe", tmp_path / "m.model")
    return tmp_path


def one_line_error(argv, capsys, match):
    status = main([str(a) for a in argv])
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert status == 1 and len(err) == 1 and err[0].startswith("tokworkbench: error: "), err
    assert match in err[0], err[0]
    return err[0]


def damaged(path, change):
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# -- our model JSON ------------------------------------------------------------------------------
def set_history(field, value):
    def change(doc):
        for h in doc["history"]:
            h[field] = value
    return change


OUR_MODEL_CASES = [
    ("history length 0", set_history("length", 0), "'length' (tokens after the step) must be at least 1"),
    ("a text count", set_history("count", "5"), "history record 0 must have whole numbers"),
    ("a bool version", lambda d: d.update(version=True), "version True is not supported"),
    ("a lone surrogate base", lambda d: d.update(units="char", base=["\ud800", "a"], merges=[], special_tokens={},
                                                  history=[]), "lone surrogate (U+D800)"),
    ("a special with a lone surrogate", lambda d: d.update(special_tokens={"\udcff": 268}), "'special_tokens' must map"),
    ("merges as text", lambda d: d.update(merges="nope"), "'merges' must be a list"),
    ("no units", lambda d: d.pop("units"), "no 'units'"),
    ("a list of units", lambda d: d.update(units=["byte"]), "units ['byte'] is not one of"),
    ("a preset name on another pattern", lambda d: d.update(pre_tokenizer={"name": "gpt2", "pattern": r"\w+"}),
     "does not go with its pattern"),
    ("a pattern that is not text", lambda d: d.update(pre_tokenizer={"name": "custom", "pattern": 5}),
     "must be a string"),
    ("history as null", lambda d: d.update(history=None), "'history' must be a list"),
]


@pytest.mark.parametrize("case,change,match", OUR_MODEL_CASES, ids=[c[0] for c in OUR_MODEL_CASES])
def test_our_model_file_fields_are_checked(files, capsys, case, change, match):
    path = damaged(files / "m.json", change)
    with pytest.raises(ModelFileError, match="."):
        load_any(path)
    one_line_error(["inspect", path], capsys, match)


def test_a_5000_digit_integer_and_100k_deep_nesting(files, capsys):
    big = files / "big.json"
    big.write_text(files.joinpath("m.json").read_text(encoding="utf-8")[:-2] + ', "x": ' + "9" * 5000 + "}",
                   encoding="utf-8")
    one_line_error(["inspect", big], capsys, "Exceeds the limit (4300 digits)")
    deep = files / "deep.json"
    deep.write_text('{"format": "tokworkbench", "x": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    one_line_error(["inspect", deep], capsys, "nests too deeply")
    with pytest.raises(ModelFileError, match="nests too deeply"):
        modelfile.load(deep)


# -- foreign files -------------------------------------------------------------------------------
@pytest.mark.parametrize("content,match", [
    (b"[1,2,3]", "the file holds a JSON array of 3 items, not a tokenizer"),
    (b"null", "the file holds JSON null, not a tokenizer"),
    (b"", "the file is empty"),
    (b"  \n\n", "the file holds only whitespace"),
    (b"\xef\xbb\xbf{}", "UTF-8 byte-order mark (EF BB BF)"),
    (b"minbpe v2\n\n0\n", "the first line is 'minbpe v2'; this tool reads 'minbpe v1' files"),
    (b'{"a": 1}', "neither a tokworkbench model nor a Hugging Face tokenizer.json"),
    (b"hello world\n", "line 1: the rank 'world' is not a number; not a model file this tool reads"),
    (b"hello\n", "line 1 is not 'BASE64 RANK'; not a model file this tool reads"),
], ids=["list", "null", "empty", "whitespace", "bom", "minbpe-v2", "other-object", "two-words", "one-word"])
def test_foreign_files_are_named_for_what_they_hold(tmp_path, capsys, content, match):
    path = tmp_path / "x.model"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match="."):
        load_any(path)
    one_line_error(["inspect", path], capsys, match)


def test_a_bom_before_our_model_is_named(files, capsys):
    path = files / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + (files / "m.json").read_bytes())
    one_line_error(["encode", "-m", path, "x"], capsys, "byte-order mark")


# -- Hugging Face --------------------------------------------------------------------------------
def first_key(doc):
    return next(iter(doc["model"]["vocab"]))


HF_CASES = [
    ("no vocab", lambda d: d["model"].pop("vocab"), "'model.vocab' must be an object"),
    ("no merges", lambda d: d["model"].pop("merges"), "'model.merges' must be a list, not JSON null"),
    ("a merge without a space", lambda d: d["model"]["merges"].__setitem__(0, "Ġthe"), "merge 0 is 'Ġthe'"),
    ("a merge of three", lambda d: d["model"]["merges"].__setitem__(0, ["a", "b", "c"]), "merge 0 is"),
    ("vocab as a list", lambda d: d["model"].update(vocab=[1, 2]), "not a JSON array of 2 items"),
    ("merges as a number", lambda d: d["model"].update(merges=5), "not a JSON number"),
    ("an id that is text", lambda d: d["model"]["vocab"].update({first_key(d): "7"}), "has the id '7'"),
    ("a negative id", lambda d: d["model"]["vocab"].update({first_key(d): -3}), "has the id -3"),
    ("a fractional id", lambda d: d["model"]["vocab"].update({first_key(d): 1.5}), "has the id 1.5"),
    ("an id used twice", lambda d: d["model"]["vocab"].update({first_key(d): 5}), "id 5 is given to both"),
    ("added tokens as null", lambda d: d.update(added_tokens=None), "'added_tokens' must be a list"),
    ("an added token without id", lambda d: d["added_tokens"][0].pop("id"), "added token 0 must have"),
    ("a normalizer list", lambda d: d.update(normalizer=[1]), "'normalizer' must be an object or null"),
    ("a pre-tokenizer string", lambda d: d.update(pre_tokenizer="x"), "'pre_tokenizer' must be an object"),
    ("a Split pattern number", lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(pattern=3),
     "a Split pattern must be"),
    ("a merge result not in vocab", lambda d: d["model"]["vocab"].pop(
        "".join(d["model"]["merges"][0].split(" ") if isinstance(d["model"]["merges"][0], str)
                else d["model"]["merges"][0])), "which is not in the vocabulary"),
    ("ignore_merges as text", lambda d: d["model"].update(ignore_merges="yes"), "'ignore_merges' must be true"),
]


@pytest.mark.parametrize("case,change,match", HF_CASES, ids=[c[0] for c in HF_CASES])
def test_hf_files_are_checked(files, capsys, case, change, match):
    path = damaged(files / "hf.json", change)
    with pytest.raises(ForeignModelError, match="."):
        load_any(path)
    one_line_error(["inspect", path], capsys, match)


# -- tiktoken ------------------------------------------------------------------------------------
def test_a_rank_that_is_not_a_number(files, capsys):
    path = files / "t.tiktoken"
    lines = path.read_text(encoding="ascii").splitlines()
    for bad in ("x3", "3.0", "1_0", "-1", "３"):
        lines[3] = lines[3].split()[0] + " " + bad
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        one_line_error(["inspect", path, "--split", "gpt4"], capsys, "")


@pytest.mark.parametrize("companion,match", [
    ("[1, 2]", "holds a JSON array of 2 items; it must be a JSON object"),
    ('{"pat_str": null, "special_tokens": null}', "'special_tokens' must map strings to ids, not JSON null"),
    ('{"special_tokens": {"<x>": "1"}}', "'special_tokens' must map strings to ids"),
    ('{"pat_str": 5}', "'pat_str' must be a string"),
    ('{"format": "other"}', "is not a tokworkbench tiktoken companion"),
    ("{", "not valid JSON"),
])
def test_a_damaged_companion(files, capsys, companion, match):
    companion_path(files / "t.tiktoken").write_text(companion, encoding="utf-8")
    one_line_error(["inspect", files / "t.tiktoken"], capsys, match)


def test_a_100_rank_file_is_not_reported_as_256_base(files, capsys):
    path = files / "short.tiktoken"
    path.write_text("".join(line + "\n" for line in (files / "t.tiktoken").read_text().splitlines()[:100]))
    one_line_error(["inspect", path, "--split", "gpt2"], capsys, "the file has 100 ranks")


def test_a_bare_tiktoken_file_advises_split_on_every_command(files, capsys):
    bare = files / "bare.tiktoken"
    shutil.copy(files / "t.tiktoken", bare)
    for argv in (["inspect", bare], ["encode", "-m", bare, "x"], ["decode", "-m", bare, "1"],
                 ["export", "-m", bare, "--format", "hf", "-o", files / "o.json"]):
        one_line_error(argv, capsys, "(gpt2, gpt4, o200k, llama3, or regex:PATTERN) with --split")
    assert main(["encode", "-m", str(bare), "--split", "gpt4", "the cat"]) == 0
    capsys.readouterr()


# -- the tiktoken pair ---------------------------------------------------------------------------
def other_model():
    t = Trainer(["zz qq zz qq zzz qqq " * 20], TrainConfig(pre_tokenizer=pre_tokenizer("gpt2")))
    list(t.run(merges=4))
    return t.model()


def test_ranks_and_companion_of_two_exports_do_not_load(files, capsys):
    export(other_model(), "tiktoken", files / "u.tiktoken")
    shutil.copy(files / "u.tiktoken", files / "t.tiktoken")  # new ranks, old companion
    message = one_line_error(["inspect", files / "t.tiktoken"], capsys, "does not belong to")
    assert "t.tiktoken.json" in message and message.count("t.tiktoken") >= 2
    with pytest.raises(ForeignModelError, match="does not belong to"):
        tiktoken_encoding(files / "t.tiktoken")


def test_an_export_killed_between_its_two_files_is_caught(files, tok, monkeypatch):
    """The companion is renamed first: a process killed before the ranks are replaced (no time
    to put anything back) leaves a pair that does not load."""
    pid = os.fork()
    if pid == 0:  # the child dies at its second rename, as a SIGKILL would leave it
        real, calls = os.replace, []

        def dies_on_ranks(*args):
            calls.append(args)
            if len(calls) == 2:
                os._exit(9)
            return real(*args)

        os.replace = dies_on_ranks
        try:
            export(other_model(), "tiktoken", files / "t.tiktoken")
        finally:
            os._exit(0)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 9
    with pytest.raises(ForeignModelError, match="does not belong to"):
        load_any(files / "t.tiktoken")
    export(other_model(), "tiktoken", files / "t.tiktoken")  # exporting again mends the pair
    assert load_any(files / "t.tiktoken").merges == other_model().merges
    assert sorted(p.name for p in files.iterdir() if "tiktoken" in p.name) == ["t.tiktoken", "t.tiktoken.json"]


def test_a_companion_from_before_the_hash_still_loads(files, tok):
    side = companion_path(files / "t.tiktoken")
    meta = json.loads(side.read_text(encoding="utf-8"))
    del meta["ranks_sha256"]
    side.write_text(json.dumps(meta), encoding="utf-8")
    assert load_any(files / "t.tiktoken").merges == tok.merges


# -- minbpe --------------------------------------------------------------------------------------
@pytest.mark.parametrize("content,match", [
    (b"minbpe v1\n\xff\xfe\n0\n", "not UTF-8 at byte offset 10 (line 2)"),
    (b"minbpe v1\n\nx\n", "line 3 must be the number of special tokens"),
    (b"minbpe v1\n\n5\n<a> 256\n", "line 3 announces 5 special tokens"),
    (b"minbpe v1\n\n0\n97 97\n1 2 3\n", "a merge line is 'ID ID'"),
    (b"minbpe v1\n\n0\n97 400\n", "it must be two ids below 256"),
    (b"minbpe v1\n\n1\n<a>\n97 97\n", "a special token line is 'TOKEN ID'"),
])
def test_minbpe_files_are_checked(tmp_path, capsys, content, match):
    path = tmp_path / "x.model"
    path.write_bytes(content)
    one_line_error(["inspect", path], capsys, match)


# -- tokens too long to build --------------------------------------------------------------------
def doubling_model_json(merges: int) -> dict:
    doc = modelfile.to_json(Trainer(["ab"], TrainConfig()).model())
    doc.update(merges=[[97, 97]] + [[256 + i, 256 + i] for i in range(merges - 1)], history=[])
    return doc


def test_a_doubling_model_is_refused_before_its_tokens_exist(tmp_path, capsys):
    path = tmp_path / "bomb.json"
    path.write_text(json.dumps(doubling_model_json(40)), encoding="utf-8")
    assert path.stat().st_size < 1000
    for argv in (["inspect", path], ["decode", "-m", path, "295"], ["encode", "-m", path, "aaaa", "--format", "tokens"]):
        one_line_error(argv, capsys, "merge 16 makes a token of 131,072 bytes; the limit is 65,536 (64 KiB)")
    with pytest.raises(TokenLimitError):
        load_any(path)


def test_the_minbpe_doubling_model_too(tmp_path, capsys):
    path = tmp_path / "bomb.model"
    path.write_text("minbpe v1\n\n0\n97 97\n" + "".join(f"{256 + i} {256 + i}\n" for i in range(39)))
    one_line_error(["inspect", path], capsys, "merge 16 makes a token of 131,072 bytes")


def test_the_limit_is_a_parameter(tmp_path, capsys):
    path = tmp_path / "long.json"
    path.write_text(json.dumps(doubling_model_json(17)), encoding="utf-8")  # its last token: 128 KiB
    one_line_error(["decode", "-m", path, "272"], capsys, "raise the limit with --max-token-bytes N")
    assert main(["decode", "-m", str(path), "272", "--max-token-bytes", "200000"]) == 0
    assert capsys.readouterr().out == "a" * (1 << 17) + "\n"
    assert len(load_any(path, max_token_bytes=1 << 17).token_bytes(272)) == 1 << 17


def test_a_long_tiktoken_token_is_refused(tmp_path):
    import base64

    lines = [f"{base64.b64encode(bytes([i])).decode()} {i}" for i in range(256)]
    lines.append(f"{base64.b64encode(b'a' * 70_000).decode()} 256")
    path = tmp_path / "long.tiktoken"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    with pytest.raises(TokenLimitError, match="rank 256 is a token of 70,000 bytes"):
        load_any(path, "gpt2")


def test_every_failure_above_is_our_class():
    for cls in (TokenLimitError, ForeignModelError, ModelFileError):
        assert issubclass(cls, TokWorkbenchError)


def test_a_lone_surrogate_from_the_api_fails_the_save_with_our_error(tmp_path):
    t = Trainer(["abc abc"], TrainConfig(special_tokens=("\udcff",)))
    list(t.run(merges=1))
    with pytest.raises(ModelFileError, match="lone surrogate"):
        modelfile.save(t.model(), tmp_path / "m.json")
    assert list(tmp_path.iterdir()) == []


def test_a_sentencepiece_model_cut_short_is_named_as_one(tmp_path, capsys):
    """A .model file cut short (a copy that stopped) is still read as SentencePiece's, and the
    error says what is wrong with it instead of listing formats without SentencePiece."""
    spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")
    from pathlib import Path
    samples = Path(__file__).resolve().parents[1] / "sample_texts"
    spm.SentencePieceTrainer.train(input=str(samples / "01_en_genesis_kjv.txt"), model_prefix=str(tmp_path / "sp"),
                                   vocab_size=300, model_type="unigram", minloglevel=2)
    cut = tmp_path / "cut.model"
    cut.write_bytes((tmp_path / "sp.model").read_bytes()[:5000])
    one_line_error(["inspect", cut], capsys, "not a SentencePiece model: its protobuf is damaged")
    text = tmp_path / "text.model"
    text.write_bytes(b"\n\nhello world\n")  # a text file that starts with line breaks is not one
    with pytest.raises(ModelFileError, match="not a model file this tool reads"):
        load_any(text)
