"""The tokenizer diff: tokens matched by bytes (checked against tiktoken on cl100k and o200k),
a model and its own export identical, merges re-ranked, specials, the pipeline, and the first
text two models encode differently."""

import json

import pytest
import tiktoken

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, load_corpus, sample_paths
from tokworkbench.core.errors import ModelFileError
from tokworkbench.core.fixed.model import FixedVocab
from tokworkbench.core.formats.presets import PRESETS, load_preset, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.inspection.diff import diff_json, diff_lines, diff_markdown, diff_models, merge_ranks
from tokworkbench.core.inspection.lock import Text
from tokworkbench.core.models.roles import encode_content
from tokworkbench.core.registry import modelfile
from tokworkbench.core.registry.export import export
from tokworkbench.core.text.pretokenize import pre_tokenizer

CORPUS = ["the theme there then these theses thermal theory theatre thought the the the"] * 3


def trained(merges: int, tie_break: str = "first", split: str = "gpt2", specials=("<s>",), corpus=CORPUS):
    t = Trainer(corpus, TrainConfig(pre_tokenizer=pre_tokenizer(split), tie_break=tie_break,
                                    special_tokens=tuple(specials)))
    list(t.run(merges=merges))
    return t.model()


def tiktoken_tokens(name: str) -> tuple[dict[bytes, int], dict[str, int]]:
    """bytes -> id of every ordinary token, and the special tokens, as tiktoken itself decodes them."""
    try:
        raw, _ = preset_ranks(PRESETS[name])
    except ModelFileError as exc:
        pytest.skip(f"no {name} data here ({exc}); pip install 'tokworkbench[openai-data]' runs this test")
    ranks = parse_ranks(raw)
    specials = PRESETS[name].special_tokens
    enc = tiktoken.Encoding(name, pat_str="x", mergeable_ranks=ranks, special_tokens=specials)
    return {enc.decode_single_token_bytes(r): r for r in ranks.values()}, \
        {s: enc.encode_single_token(s) for s in specials}


def test_cl100k_against_o200k_counts_what_tiktoken_counts():
    ta, sa = tiktoken_tokens("cl100k_base")
    tb, sb = tiktoken_tokens("o200k_base")
    d = diff_models(load_preset("cl100k_base"), load_preset("o200k_base"), ("cl100k", "o200k"))
    assert d.shared == len(ta.keys() & tb.keys())
    assert d.added.count == len(tb.keys() - ta.keys()) and d.removed.count == len(ta.keys() - tb.keys())
    assert d.moved.count == sum(1 for t in ta.keys() & tb.keys() if ta[t] != tb[t])
    assert [(c.token, c.id_b) for c in d.added.first] == sorted(((t, i) for t, i in tb.items() if t not in ta),
                                                                key=lambda x: x[1])[:len(d.added.first)]
    differing = {s for s in sa.keys() | sb.keys() if sa.get(s) != sb.get(s)}
    assert {s.token.decode() for s in d.specials} == differing
    assert ("pre-tokenizer" in [w for w, _, _ in d.pipeline]) and not d.identical
    assert d.merges == (len(ta) - 256, len(tb) - 256)


@pytest.mark.parametrize("fmt", ["tiktoken", "hf"])
def test_a_model_and_its_own_export_are_identical(fmt, tmp_path, capsys):
    model = trained(30, specials=("<|endoftext|>",))
    modelfile.save(model, tmp_path / "m.json")
    out = tmp_path / ("m.tiktoken" if fmt == "tiktoken" else "tokenizer.json")
    export(model, fmt, out)
    text = tmp_path / "t.txt"
    text.write_text(" ".join(CORPUS) + " and something else", encoding="utf-8")
    assert main(["diff", str(tmp_path / "m.json"), str(out), str(text)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "identical: the same tokens, ids, merges and pipeline"
    assert f"tokens: {model.vocab_size - 1:,} shared, 0 added, 0 removed, 0 under another id" in lines
    assert "texts: 1, the same ids from both" in lines


def test_r50k_against_a_model_trained_here(tmp_path):
    corpus = [d.text for d in load_corpus(sample_paths()).documents]
    ours = trained(200, corpus=corpus, specials=())
    r50k = load_preset("r50k_base")
    texts = [Text(f"sample {k}", None, t) for k, t in enumerate(corpus)]
    d = diff_models(r50k, ours, ("r50k", "ours"), texts)
    theirs = {r50k.token_bytes(i): i for i in range(r50k.vocab_size) if i not in r50k.special_ids.values()}
    mine = {ours.token_bytes(i): i for i in range(ours.vocab_size)}
    assert (d.shared, d.added.count, d.removed.count) == (len(theirs.keys() & mine.keys()),
                                                          len(mine.keys() - theirs.keys()),
                                                          len(theirs.keys() - mine.keys()))
    assert d.moved.count == sum(theirs[t] != mine[t] for t in theirs.keys() & mine.keys())
    assert [(s.token, s.id_a, s.id_b) for s in d.specials] == [(b"<|endoftext|>", 50256, None)]
    # the first text they encode differently: found here from the two encodings
    first = next(k for k, t in enumerate(corpus) if encode_content(r50k, t) != encode_content(ours, t))
    a, b = encode_content(r50k, corpus[first]), encode_content(ours, corpus[first])
    index = next(k for k, (x, y) in enumerate(zip(a, b)) if x != y)
    p = d.parting
    assert (p.where, p.text_number, p.index, d.texts) == (f"sample {first}", first + 1, index, first)
    assert p.offset == len(ours.decode_bytes(b[:index]).decode("utf-8", "ignore"))
    assert (p.run_a[-1][0], p.run_b[0][1]) == (min(index + 3, len(a) - 1), b[max(0, index - 3)])


def test_a_different_tie_break_shows_as_merges_re_ranked():
    a, b = trained(20, "first"), trained(20, "lexmax")
    d = diff_models(a, b)
    ma, mb = merge_ranks(a), merge_ranks(b)
    reranked = sorted((r, p) for p, r in ma.items() if p in mb and mb[p] != r)
    assert d.reranked.count == len(reranked) > 0
    assert [(m.left, m.right, m.rank_a, m.rank_b) for m in d.reranked.first] == \
        [(*p, r, mb[p]) for r, p in reranked[:len(d.reranked.first)]]
    assert d.merges_shared == len(ma.keys() & mb.keys()) and not d.identical
    assert d.pipeline == ()  # the tie-break is how training chose, not how encoding works


def test_special_tokens_and_the_pre_tokenizer_are_compared_apart_from_the_tokens():
    a = trained(10, specials=("<s>",))
    b = trained(10, split="gpt4", specials=("<s>", "</s>"))
    d = diff_models(a, b)
    assert [(s.token, s.id_a, s.id_b) for s in d.specials] == [(b"</s>", None, b.special_ids["</s>"])]
    assert [w for w, _, _ in d.pipeline] == ["pre-tokenizer"]
    assert d.pipeline[0][1].startswith("gpt2 ") and d.pipeline[0][2].startswith("gpt4 ")


def test_a_kind_without_merges_is_compared_by_its_tokens():
    a = FixedVocab(("我", "喜欢", "AI", "学习", "。"))
    b = FixedVocab(("我", "AI", "喜欢", "学习", "！"))
    d = diff_models(a, b, texts=[Text("t", None, "我喜欢AI学习")])
    assert d.merges is None and (d.shared, d.added.count, d.removed.count, d.moved.count) == (4, 1, 1, 2)
    assert [(c.token.decode(), c.id_a, c.id_b) for c in d.moved.first] == [("喜欢", 1, 2), ("AI", 2, 1)]
    assert (d.parting.index, d.parting.offset) == (1, 1)
    unencodable = diff_models(a, b, texts=[Text("t", None, "我学习"), Text("u", None, "我。")]).parting
    assert (unencodable.where, unencodable.offset) == ("u", None) and unencodable.error.startswith("B: ")
    assert "DIFFERENT" == diff_lines(d)[-1]


def test_the_formats_say_the_same(tmp_path, capsys):
    a, b = trained(12), trained(11)
    modelfile.save(a, tmp_path / "a.json")
    modelfile.save(b, tmp_path / "b.json")
    (tmp_path / "t.txt").write_text("the thermal theory\n", encoding="utf-8")
    args = [str(tmp_path / "a.json"), str(tmp_path / "b.json"), str(tmp_path / "t.txt")]
    d = diff_models(a, b, (args[0], args[1]), [Text(args[2], None, "the thermal theory\n")])
    assert main(["diff", *args, "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc == json.loads(json.dumps(diff_json(d)))
    assert doc["tokens"]["removed"]["count"] == 1 and doc["first_parting"]["text"] == args[2]
    assert main(["diff", *args, "--format", "markdown"]) == 1
    md = capsys.readouterr().out
    assert md.splitlines() == diff_markdown(d) and "- tokens removed: 1" in md
    assert main(["diff", *args]) == 1
    assert capsys.readouterr().out.splitlines() == diff_lines(d)


def test_a_file_that_is_not_a_tokenizer_is_one_line_and_exit_2(tmp_path, capsys):
    modelfile.save(trained(5), tmp_path / "a.json")
    (tmp_path / "x.json").write_text('{"hello": 1}')
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "x.json")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1


# -- the Compare tab --------------------------------------------------------------------------
async def test_the_compare_tab_shows_the_diff_summary_at_80x24(tmp_path):
    from textual.widgets import Input, Static

    from tokworkbench.app import WorkbenchApp
    from tokworkbench.app.widgets.compare import ComparePanel

    app = WorkbenchApp()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("N")
        await pilot.pause()
        saved = tmp_path / "saved.json"
        app.main.session.save(saved)
        await pilot.press("n")  # one merge more here than in the file
        await pilot.pause()
        here, there = app.main.session.model(), modelfile.load(saved)
        lines = [line for d in app.main.session.corpus.documents for line in d.text.split("\n")]
        parting = next(line for line in lines if encode_content(here, line) != encode_content(there, line))
        app.main.query_one("#encode-input", Input).value = parting
        await pilot.press("C")
        await pilot.pause()
        app.screen.query_one("#replay-path", Input).value = str(saved)
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()  # the diff and the corpus counts come from a worker
        await pilot.pause()
        panel = app.query_one(ComparePanel)
        expected = diff_models(here, there, texts=[Text("the encode input", None, parting)])
        assert (panel.diff.added.count, panel.diff.removed.count) == (0, 1) == \
            (expected.added.count, expected.removed.count)
        widget = app.query_one("#compare-diff", Static)
        drawn = str(widget.render())
        assert f"{expected.shared:,} tokens shared · 0 added · 1 removed" in drawn
        assert f"first parting: the encode input at character {expected.parting.offset:,} " \
               f"(id {expected.parting.index:,})" in drawn
        counts = sum(len(m.encode_ordinary(d.text)) for m in (here,) for d in app.main.session.corpus.documents)
        assert f"on the corpus: A {counts:,} tokens" in drawn
        assert panel.counts.a == counts and panel.counts.b == sum(len(there.encode_ordinary(d.text))
                                                                  for d in app.main.session.corpus.documents)
        region = widget.region
        assert drawn.count("\n") + 1 <= region.height <= 4
        assert region.y + region.height <= 24 and region.width <= 80  # on screen


def test_a_scored_piece_whose_score_moved_is_a_change(tmp_path):
    """Unigram segments by its scores: one score changed is a difference even with the same
    pieces under the same ids (the same fingerprint)."""
    from dataclasses import replace

    from tokworkbench.core.registry.load import load_any

    uni = tmp_path / "u.json"
    assert main(["train", str(sample_paths()[0]), "--kind", "unigram", "--vocab-size", "200",
                 "-o", str(uni)]) == 0
    model = load_any(uni)
    k = len(model.pieces) - 1
    piece, score = model.pieces[k]
    other = replace(model, pieces=[*model.pieces[:k], (piece, score - 1.0)])
    same = diff_models(model, load_any(uni))
    d = diff_models(model, other)
    assert same.identical and same.scored and same.rescored.count == 0
    assert d.fingerprints[0] == d.fingerprints[1] and not d.identical
    assert [(c.piece, c.score_a, c.score_b) for c in d.rescored.first] == [(piece, score, score - 1.0)]
    assert "scores: 1 of the pieces both have scored otherwise" in diff_lines(d)
