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
