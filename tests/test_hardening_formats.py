"""Issue 10, silently wrong: what another library would read differently is refused (checked
against the real `tokenizers`), or reproduced exactly; patterns are named explicitly and cannot
run forever; a dead worker and bad advice become clear errors."""

import json
import os
import signal

import pytest
from tokenizers import Regex, pre_tokenizers
from tokenizers import Tokenizer as HFTokenizer

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, pre_tokenizer
from tokworkbench.core.bytelevel import bytes_to_unicode
from tokworkbench.core.errors import ExportError, PatternTimeoutError, WorkerError
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.formats.hf_bpe import to_hf
from tokworkbench.core.formats.hf_common import check_hf_pattern
from tokworkbench.core.formats.minbpe import from_minbpe
from tokworkbench.core.registry.export import check, export
from tokworkbench.core.registry.load import load_any
from tokworkbench.core.text.parallel import fork_map
from tokworkbench.core.text.pretokenize import PreTokenizer, parse_split

TEXT = "the cat sat on the mat with the hat, the theory " * 20
PROBES = ["the cat", " the cat", "abc", "abcab", "Ġthe x", "banana", "a  b\n\nc", "It's 123 ÄÖÜ 😀"]


def one_line_error(argv, capsys, match):
    status = main([str(a) for a in argv])
    err = [line for line in capsys.readouterr().err.splitlines() if line]
    assert status == 1 and len(err) == 1 and err[0].startswith("tokworkbench: error: "), err
    assert match in err[0], err[0]


def trained(specials=(), pattern=None, merges=20):
    """A small byte-level model: gpt2's split, or the custom `pattern`."""
    pre = pre_tokenizer("custom", pattern) if pattern else pre_tokenizer("gpt2")
    t = Trainer([TEXT], TrainConfig(pre_tokenizer=pre, special_tokens=specials))
    list(t.run(merges=merges))
    return t.model()


# -- HF ignore_merges ----------------------------------------------------------------------------
def abc_tokenizer_json(ignore_merges: bool) -> dict:
    """b+c, a+b, ab+c: the merges make a+bc of 'abc', the vocabulary holds 'abc' whole."""
    to_char = bytes_to_unicode()
    vocab = {to_char[b]: b for b in range(256)}
    vocab.update({"bc": 256, "ab": 257, "abc": 258})
    return {
        "version": "1.0", "added_tokens": [], "normalizer": None, "post_processor": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": ignore_merges, "vocab": vocab, "merges": [["b", "c"], ["a", "b"], ["ab", "c"]]},
    }


def test_ignore_merges_that_changes_the_ids_is_read_as_hf_reads_it():
    doc = abc_tokenizer_json(True)
    hf = HFTokenizer.from_str(json.dumps(doc))
    assert hf.encode("abc").ids == [258]  # HF looks the whole chunk up
    assert from_hf(abc_tokenizer_json(False)).encode("abc") == [97, 256]  # the merges alone
    ours = from_hf(doc)
    assert ours.whole_chunk
    for text in ("abc", "abcd abc", "xabc", "ab c"):
        assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids


def test_ignore_merges_that_changes_nothing_is_read_and_encodes_like_hf(tmp_path):
    tok = trained()
    doc = to_hf(tok)
    doc["model"]["ignore_merges"] = True
    hf = HFTokenizer.from_str(json.dumps(doc))
    ours = from_hf(doc)
    for text in PROBES + [TEXT]:
        assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids


# -- special tokens that collide -----------------------------------------------------------------
def naive_hf(tok) -> HFTokenizer:
    """What the old export wrote (a special token's name simply put in the vocabulary)."""
    return HFTokenizer.from_str(json.dumps(to_hf(tok)))


@pytest.mark.parametrize("special", ["Ġthe", "a"])
def test_a_special_token_named_like_a_token_is_refused_for_hf(tmp_path, special, capsys):
    tok = trained(specials=(special,))
    hf = naive_hf(tok)
    to_char = bytes_to_unicode()
    names = ["".join(to_char[b] for b in t) for t in tok.ranked_tokens]
    lost = [i for i, name in enumerate(names) if hf.id_to_token(i) != name]
    assert lost, "HF kept every ordinary token; the collision test proves nothing"
    if special == "Ġthe":
        assert hf.encode(" the cat", add_special_tokens=False).ids != tok.encode(" the cat")
    with pytest.raises(ExportError, match=f"HF cannot hold the special token {special!r}"):
        check(tok, "hf")
    check(tok, "tiktoken")  # tiktoken keeps special tokens apart: nothing to refuse there


def test_train_notes_the_collision_and_export_refuses_it(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    model = tmp_path / "m.json"
    assert main(["train", str(corpus), "--split", "gpt2", "--merges", "20", "--special", "Ġthe",
                 "-o", str(model)]) == 0
    err = capsys.readouterr().err
    assert "note: this model cannot be exported to HF: HF cannot hold the special token 'Ġthe'" in err
    one_line_error(["export", "-m", model, "--format", "hf", "-o", tmp_path / "hf.json"], capsys,
                   "is also the byte-level name of token")
    assert not (tmp_path / "hf.json").exists()


def test_specials_that_do_not_collide_still_export_exactly(tmp_path):
    tok = trained(specials=("<|endoftext|>", "<pad>"))
    export(tok, "hf", tmp_path / "hf.json")
    hf = HFTokenizer.from_file(str(tmp_path / "hf.json"))
    for text in PROBES + ["x<|endoftext|>y<pad>"]:
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text, allowed_special="all")


def test_a_special_from_the_shell_that_is_not_utf8(tmp_path, capsys, monkeypatch):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    from tokworkbench.core.session.settings import Settings

    monkeypatch.setattr(Settings, "learner", lambda *a, **k: pytest.fail("trained before refusing the special token"))
    one_line_error(["train", corpus, "--merges", "2", "--special", os.fsdecode(b"\xff"), "-o", tmp_path / "m.json"],
                   capsys, "special token 1 is not valid UTF-8 text (byte 0xff at offset 0)")


# -- custom patterns HF cannot read --------------------------------------------------------------
@pytest.mark.parametrize("pattern", [r"\m\w+|.", r"\h+|\S+", r"(?V1)[\w--\d]+|.", r"(?r)\w+|.", r"\w+\M|.",
                                     r"(?s).", r"(?P<w>\w+)|.", r"\p{Han}+|\X"])
def test_regex_only_syntax_is_refused_for_hf(pattern):
    tok = trained(pattern=pattern, merges=5)
    with pytest.raises(ExportError, match="Oniguruma"):
        check(tok, "hf")


@pytest.mark.parametrize("pattern", [r"\w+|\s+|.", r"(?i:the)|\p{L}+|[^\p{L}]", r" ?\p{L}++| ?\p{N}{1,3}+|\s+|."])
def test_patterns_both_engines_read_alike_still_export(tmp_path, pattern):
    tok = trained(pattern=pattern, merges=10)
    export(tok, "hf", tmp_path / "hf.json")
    hf = HFTokenizer.from_file(str(tmp_path / "hf.json"))
    for text in PROBES + [TEXT]:
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text)


def test_the_probe_agrees_with_tokenizers_on_what_it_refuses():
    """Each refused pattern really does split differently in HF, or does not compile there."""
    for pattern in (r"\p{Han}+|\X", r"(?P<w>\w+)|."):
        ours = pre_tokenizer("custom", pattern).split("漢字 नमस्ते ok")
        try:
            theirs = [s for s, _ in pre_tokenizers.Split(Regex(pattern), behavior="isolated")
                      .pre_tokenize_str("漢字 नमस्ते ok")]
        except Exception:
            continue
        assert theirs != ours, pattern
    check_hf_pattern(pre_tokenizer("gpt4"))  # presets are never probed: tests check them elsewhere


# -- minbpe special tokens -----------------------------------------------------------------------
@pytest.mark.parametrize("special", ["a\nb", "<a b>", "x\r", " lead", "a\u2028b"])
def test_a_minbpe_special_with_whitespace_is_refused(special):
    tok = trained(specials=(special,), merges=3)
    with pytest.raises(ExportError, match="minbpe reads each special token line"):
        check(tok, "minbpe")


def test_minbpe_lines_split_as_minbpe_reads_them(tmp_path):
    tok = trained(specials=("<|endoftext|>", "<|fim_prefix|>"), merges=3)
    export(tok, "minbpe", tmp_path / "m.model")
    back = load_any(tmp_path / "m.model")
    assert back.special_tokens == tok.special_tokens and back.merges == tok.merges
    crlf = (tmp_path / "m.model").read_bytes().replace(b"\n", b"\r\n")
    assert from_minbpe(crlf).merges == tok.merges


# -- naming a pre-tokenizer ----------------------------------------------------------------------
def test_a_mistyped_preset_is_not_taken_for_a_regex(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    one_line_error(["train", corpus, "--split", "gpt5", "--merges", "2", "-o", tmp_path / "m.json"], capsys,
                   "unknown pre-tokenizer 'gpt5'; did you mean gpt4? (a custom pattern is written regex:PATTERN)")
    one_line_error(["train", corpus, "--split", r"\w+", "--merges", "2", "-o", tmp_path / "m.json"], capsys,
                   "a custom pattern is written regex:PATTERN")
    assert main(["train", str(corpus), "--split", r"regex:\w+|\s+", "--merges", "2", "-o", str(tmp_path / "m.json")]) == 0
    assert load_any(tmp_path / "m.json").pre_tokenizer == PreTokenizer("custom", r"\w+|\s+")
    assert parse_split("GPT2") == pre_tokenizer("gpt2")
    assert parse_split("regex:" + pre_tokenizer("gpt4").pattern) == pre_tokenizer("gpt4")
    assert pre_tokenizer(r"\d+").name == "custom"  # the API (and the app's regex box) takes raw patterns


# -- patterns that never end ---------------------------------------------------------------------
def test_a_catastrophic_pattern_names_document_and_offset():
    pre = PreTokenizer("custom", "(a|aa)+c", timeout=0.2)
    with pytest.raises(PatternTimeoutError, match=r"the pattern takes too long on document 2 at offset 7"):
        Trainer(["fine text", "xx c ac " + "a" * 45], TrainConfig(pre_tokenizer=pre))
    with pytest.raises(PatternTimeoutError, match=r"the pattern takes too long at offset 0"):
        pre.split("a" * 45)


def test_the_cli_reports_a_catastrophic_pattern(tmp_path, capsys, monkeypatch):
    from tokworkbench.core.text import pretokenize

    monkeypatch.setattr(pretokenize, "PATTERN_TIMEOUT", 0.2)
    corpus = tmp_path / "a.txt"
    corpus.write_text("a" * 45, encoding="utf-8")
    one_line_error(["train", corpus, "--split", "regex:(a|aa)+c", "--merges", "1", "-o", tmp_path / "m.json"],
                   capsys, "the pattern takes too long on document 1 at offset 0")


def test_the_timeout_allows_a_long_document_that_keeps_matching():
    pre = PreTokenizer("custom", r"\w+|\s+", timeout=0.3)
    text = "word " * 300_000  # usually longer than 0.3 s in all, never that long between two matches
    assert len(pre.split(text)) == 600_000


def test_presets_run_without_the_timeout(monkeypatch):
    from tokworkbench.core.text import pretokenize

    monkeypatch.setattr(pretokenize, "PATTERN_TIMEOUT", 0.0)
    assert pre_tokenizer("gpt4").split("the cat") == ["the", " cat"]


# -- a dead worker -------------------------------------------------------------------------------
def _dies_in_the_child(share):
    if share == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    return share


def test_a_killed_worker_is_a_worker_error():
    with pytest.raises(WorkerError, match="a worker process died before it reported \\(killed by SIGKILL"):
        fork_map(_dies_in_the_child, ["ok", "die"])


# -- advice that applies -------------------------------------------------------------------------
def test_encode_f_does_not_advise_a_flag_it_lacks(tmp_path, capsys):
    model = tmp_path / "m.json"
    corpus = tmp_path / "c.txt"
    corpus.write_text(TEXT, encoding="utf-8")
    assert main(["train", str(corpus), "--merges", "3", "-o", str(model)]) == 0
    capsys.readouterr()
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\u00e9".encode("latin-1"))
    status = main(["encode", "-m", str(model), "-f", str(bad)])
    err = capsys.readouterr().err
    assert status == 1 and "not valid UTF-8 at byte offset 3" in err and "--replace-invalid" not in err
    one_line_error(["train", bad, "--merges", "1", "-o", tmp_path / "o.json"], capsys, "(--replace-invalid)")


def test_the_core_message_names_no_flag(tmp_path):
    from tokworkbench.core import load_corpus
    from tokworkbench.core.errors import InvalidUtf8Error

    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\u00e9".encode("latin-1"))
    with pytest.raises(InvalidUtf8Error) as info:
        load_corpus([bad])
    assert "--" not in str(info.value)  # the app has no such flag; the CLI adds it where it has one
