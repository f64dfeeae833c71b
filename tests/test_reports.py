"""The shared report writers: each format reads back to the rows it was given (CSV and JSON
unrounded), text from a model file cannot break a format, and the SVG is well-formed XML."""

import csv
import io
import json
import math
import xml.etree.ElementTree as ET

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokworkbench.core.errors import ReportError
from tokworkbench.core.inspection.reports import (
    MISSING,
    Column,
    bar_chart_svg,
    render,
    to_csv,
    to_json,
    to_markdown,
    to_table,
)

COLUMNS = (Column("name"), Column("count", "n"), Column("rate", "rate", 3), Column("share", "used", 1, percent=True),
           Column("ok"))
ROWS = [{"name": "cl100k_base", "count": 35288, "rate": 3.16612, "share": 0.0482, "ok": True},
        {"name": "a|b\nc", "count": None, "rate": math.nan, "share": None, "ok": False},
        {"name": "=SUM(A1)", "count": 7, "rate": 1 / 3, "share": 1.0, "ok": None}]


def test_table_and_markdown_round_and_align():
    table = to_table(ROWS, COLUMNS).splitlines()
    assert table[0].split() == ["name", "n", "rate", "used", "ok"]
    assert "35,288" in table[2] and "3.166" in table[2] and "4.8%" in table[2] and "yes" in table[2]
    assert table[3].count(MISSING) == 3  # None, NaN and None
    n_ends = table[0].index(" n ") + 2
    assert table[2][:n_ends].endswith("35,288") and table[4][:n_ends].endswith(" 7")  # numbers to the right
    md = to_markdown(ROWS, COLUMNS).splitlines()
    assert md[0] == "| name | n | rate | used | ok |" and md[1] == "| --- | ---: | ---: | ---: | --- |"
    assert "a\\|b c" in md[3] and md[3].count("|") - md[3].count("\\|") == 6  # the pipe cannot open a cell


def test_csv_and_json_keep_every_digit():
    rows = list(csv.DictReader(io.StringIO(to_csv(ROWS, COLUMNS))))
    assert rows[0] == {"name": "cl100k_base", "count": "35288", "rate": "3.16612", "share": "0.0482", "ok": "True"}
    assert rows[1]["name"] == "a|b\nc" and rows[1]["rate"] == "" and rows[1]["count"] == ""
    assert rows[2]["name"] == "'=SUM(A1)" and float(rows[2]["rate"]) == 1 / 3  # no formula; every digit
    doc = json.loads(to_json(ROWS, COLUMNS, {"reference": "en"}))
    assert doc["reference"] == "en" and doc["rows"][2]["rate"] == 1 / 3
    assert doc["rows"][1]["rate"] is None and doc["rows"][1]["count"] is None  # NaN is not JSON
    assert json.loads(to_json(ROWS, COLUMNS))[0]["name"] == "cl100k_base"


def test_an_unknown_format_is_one_error():
    with pytest.raises(ReportError, match="the formats are table, csv, json, markdown"):
        render("xlsx", ROWS, COLUMNS)


@given(st.lists(st.text(), min_size=1, max_size=4), st.lists(st.floats(allow_nan=True) | st.none(), max_size=8))
def test_the_svg_is_xml_whatever_the_names(names, numbers):
    series = list(dict.fromkeys(names))
    groups = [f"text {k}" for k in range(3)]
    values = {(g, s): numbers[(i * len(series) + j) % len(numbers)] if numbers else None
              for i, g in enumerate(groups) for j, s in enumerate(series)}
    svg = bar_chart_svg("bytes <per> token & more", groups, series, values, unit="\x07")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    texts = [e.text or "" for e in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[0] == "bytes <per> token & more"
    bars = [e for e in root.iter("{http://www.w3.org/2000/svg}rect") if e.find("{http://www.w3.org/2000/svg}title")
            is not None]
    finite = [v for v in values.values() if v is not None and math.isfinite(v)]
    assert len(bars) == len(finite)
    assert all(float(b.get("width")) >= 0 for b in bars)


def test_the_compression_curve_is_drawn_from_the_history(tmp_path, capsys):
    """`inspect --curve-svg`: a polyline through (0, tokens before) and (k, tokens after merge k),
    its ends labelled with the training's own figures; refused for a model without merges."""
    import xml.etree.ElementTree as ET

    from tokworkbench.cli import main
    from tokworkbench.core import TrainConfig, Trainer
    from tokworkbench.core.registry import modelfile
    from tokworkbench.core.text.pretokenize import pre_tokenizer

    texts = ["the cat sat on the mat and the hat " * 30, "a rat ate the oat in a boat " * 30]
    trainer = Trainer(texts, TrainConfig(pre_tokenizer=pre_tokenizer("gpt2")))
    list(trainer.run(merges=40))
    model = trainer.model()
    path, out = tmp_path / "m.json", tmp_path / "curve.svg"
    modelfile.save(model, path)
    assert main(["inspect", str(path), "--curve-svg", str(out)]) == 0
    root = ET.fromstring(out.read_text(encoding="utf-8"))
    ns = "{http://www.w3.org/2000/svg}"
    points = root.find(f"{ns}polyline").get("points").split()
    assert len(points) == len(model.history) + 1 > 10
    labels = [t.text for t in root.iter(f"{ns}text")]
    first = model.history[0]
    assert f"{first.length + first.replacements:,}" in labels and f"{model.history[-1].length:,}" in labels
    assert str(len(model.history)) in labels
    assert main(["inspect", "gpt2", "--curve-svg", str(tmp_path / "no.svg")]) == 1
    # one file named by both: the SVG replaced the CSV after "wrote ... steps" was said
    both = tmp_path / "both.out"
    assert main(["inspect", str(path), "--history-csv", str(both), "--curve-svg", str(tmp_path / "." / "both.out")]) == 1
    assert "give each its own file" in capsys.readouterr().err and not both.exists()
    assert not (tmp_path / "no.svg").exists()
