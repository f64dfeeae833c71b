"""`inspect` prints a model file's strings through the one escaping rule: a normalizer,
pattern or special token that carries a terminal escape (OSC 52 writes the clipboard) is shown
as \\x1b..., never sent raw (issue 28, item 3)."""

from tokworkbench.cli import main
from tokworkbench.core.inspection.escape import printable

OSC52 = "\x1b]52;c;aGVsbG8=\x07"


def test_printable_escapes_controls_and_keeps_line_ends():
    assert printable(f"a\n{OSC52}\x9b\x7f") == "a\n\\x1b]52;c;aGVsbG8=\\x07\\x9b\\x7f"


def test_inspect_never_prints_a_model_files_escape_codes(tmp_path, capsys):
    corpus = tmp_path / "c.txt"
    corpus.write_text("hello world, hello there\n" * 20)
    model = tmp_path / "m.json"
    assert main(["train", str(corpus), "--vocab-size", "270", "--split", f"regex:{OSC52}|\\w+| ?[^\\w\\s]+|\\s+",
                 "--special", OSC52, "-o", str(model)]) == 0
    capsys.readouterr()
    assert main(["inspect", str(model)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert out.count("\\x1b]52;c;aGVsbG8=\\x07") == 2  # the pattern and the special token, escaped


def hostile_model(tmp_path):
    """A model whose special token and a trained token carry terminal controls (ESC, BEL, the
    8-bit CSI U+009B): every report that prints tokens meets them."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("".join(f"hello world\x9b[2J, hello there {n}\n" for n in range(40)) + f"{OSC52}\n")
    model = tmp_path / "m.json"
    assert main(["train", str(corpus), "--vocab-size", "300", "--units", "char", "--split", "gpt4",
                 "--special", OSC52, "-o", str(model)]) == 0
    return model


def no_controls(out: str) -> bool:
    return not any(ord(c) < 32 and c != "\n" or 127 <= ord(c) < 160 for c in out)


def test_every_report_escapes_a_model_files_controls(tmp_path, capsys):
    """compare, encode (tokens, json, nbest) and batches print token strings: none reaches the
    terminal raw, and the JSON ones stay the same JSON."""
    import json

    model = hostile_model(tmp_path)
    text = f"hello world\x9b[2J {OSC52}"
    sample = tmp_path / "t.txt"
    sample.write_text(text)
    for argv in (["compare", str(model), str(model), "-f", str(sample)],
                 ["encode", "-m", str(model), "--allow-special", text, "--format", "tokens"],
                 ["encode", "-m", str(model), "--allow-special", text, "--format", "json"],
                 ["batches", "-m", str(model), str(tmp_path / "c.txt"), "-T", "4", "-B", "2"],
                 ["batches", "-m", str(model), str(tmp_path / "c.txt"), "-T", "4", "-B", "2", "--format", "json"]):
        capsys.readouterr()
        code = main(argv)
        out = capsys.readouterr().out
        assert code in (0, 1), argv
        assert no_controls(out), (argv, out[:300])
        if "json" in argv:
            json.loads(out)


def test_decode_prints_the_text_asked_for_as_it_is(tmp_path, capsys):
    """decode's output is the user's text, for a pipe: it is not escaped."""
    model = hostile_model(tmp_path)
    capsys.readouterr()
    assert main(["encode", "-m", str(model), "hello\x9b"]) == 0
    ids = capsys.readouterr().out.split()
    assert main(["decode", "-m", str(model), *ids]) == 0
    assert capsys.readouterr().out == "hello\x9b\n"
