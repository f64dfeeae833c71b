"""The merge tree's core: for every token of a trained model and of r50k, the leaves joined are
the token's bytes and each node's two parents joined are its own; counts are the trainer's; a
whole-only token shows what the merges alone build; a Unigram piece its score and Viterbi path;
the drawing fits its width and folds deep trees."""

import base64
import json

import pytest
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, normalizers, pre_tokenizers, trainers

from tokworkbench.cli import main
from tokworkbench.core import TrainConfig, Trainer, load_corpus, pre_tokenizer, sample_paths
from tokworkbench.core.errors import DecodeError, TokenNotFoundError
from tokworkbench.core.formats.hf import from_hf
from tokworkbench.core.formats.presets import PRESETS, load_preset, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.inspection.mergetree import (
    BASE,
    MERGED,
    OTHER,
    PIECE,
    SPECIAL,
    WHOLE,
    cells,
    describe_tree,
    draw_nodes,
    find_token,
    merge_tree,
    merge_trees,
    step_counts,
)
from tokworkbench.core.registry.load import load_any

WHOLE_ONLY = [" việc".encode(), b"qzx", " değişik".encode()]


@pytest.fixture(scope="module")
def corpus_texts():
    return [d.text for d in load_corpus(sample_paths()).documents]


@pytest.fixture(scope="module")
def trainer(corpus_texts):
    t = Trainer(corpus_texts[:4], TrainConfig(pre_tokenizer=pre_tokenizer("gpt4"), special_tokens=("<|eot|>",)))
    list(t.run(merges=400))
    return t


def _check_tree(node) -> int:
    """Each node's parents rebuild it; the number of nodes checked."""
    todo, seen = [node], 0
    while todo:
        n = todo.pop()
        seen += 1
        if n.children:
            assert b"".join(c.data for c in n.children) == n.data
            todo.extend(n.children)
        else:
            assert n.step is None
    return seen


def test_every_token_of_a_trained_model_is_rebuilt_by_its_leaves_with_the_trainers_counts(trainer):
    model = trainer.model()
    counts = step_counts(trainer.history)
    trees = merge_trees(model, range(model.vocab_size), counts)
    by_step = {r.step: r for r in trainer.history}
    for tid, tree in enumerate(trees):
        if tid in model.special_ids.values():
            assert tree.what == SPECIAL and tree.roots == ()
            continue
        (root,) = tree.roots
        assert b"".join(leaf.data for leaf in root.leaves()) == model.token_bytes(tid)
        _check_tree(root)
        if tid < model.base_size:
            assert tree.what == BASE and root.step is None
        else:
            assert tree.what == MERGED and root.step == tid - model.base_size + 1
            assert root.count == by_step[root.step].count
            assert [c.id for c in root.children] == list(by_step[root.step].pair)
    assert sum(t.what == MERGED for t in trees) == 400


def test_every_token_of_r50k_is_rebuilt_by_its_leaves():
    model = load_preset("r50k_base")
    ids = range(model.vocab_size)
    nodes = 0
    for tid, tree in zip(ids, merge_trees(model, ids)):
        if tree.what == SPECIAL:
            continue
        (root,) = tree.roots
        assert b"".join(leaf.data for leaf in root.leaves()) == model.token_bytes(tid)
        assert root.count is None  # a ranks file keeps no counts
        nodes += len(root.leaves())
    assert nodes > 200_000


def test_the_drawing_fits_its_width_and_folds_deep_trees():
    model = load_preset("r50k_base")
    longest = sorted(range(50_000), key=lambda t: -len(model.token_bytes(t)))[:40]
    for width in (80, 60, 40):
        for tree in merge_trees(model, longest):
            lines = describe_tree(tree, width)
            assert all(cells(line) <= width for line in lines)
    tree = merge_tree(model, find_token(model, " national"))
    lines = draw_nodes(tree.roots, 80, fold_at=2)
    assert lines[0].startswith("'␣national' id 2260 · merge 2,005")
    assert any("⤵ below" in line for line in lines) and any("folded from above" in line for line in lines)
    shown = {line.split("'")[1] for line in lines if "'" in line}
    assert {"␣n", "ational", "ation", "at", "ion", "on", "al"} <= shown  # every merged part is drawn somewhere


@pytest.fixture(scope="module")
def whole_only(tmp_path_factory):
    raw, _ = preset_ranks(PRESETS["r50k_base"])
    ranks = {t: r for t, r in parse_ranks(raw).items() if r < 3000}
    for t in WHOLE_ONLY:
        ranks[t] = len(ranks)
    path = tmp_path_factory.mktemp("whole") / "whole.tiktoken"
    path.write_bytes("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()).encode())
    return load_any(path, "gpt4"), ranks


def test_a_whole_only_token_shows_what_the_merges_alone_build_from_its_bytes(whole_only):
    model, ranks = whole_only
    for data in WHOLE_ONLY:
        tid = ranks[data]
        tree = merge_tree(model, tid)
        assert tree.what == WHOLE and len(tree.roots) > 1
        assert b"".join(r.data for r in tree.roots) == data
        assert [r.id for r in tree.roots] == model.to_outside(model.apply_merges(list(data)))
        assert model.encode_ordinary(data.decode()) == [tid]  # yet the whole chunk is the one token
        for root in tree.roots:
            _check_tree(root)
        assert "whole chunk only" in describe_tree(tree)[0]


def test_a_unigram_piece_shows_its_score_and_its_own_best_segmentation(corpus_texts):
    hf = HFTokenizer(models.Unigram())
    hf.normalizer = normalizers.NFKC()
    hf.pre_tokenizer = pre_tokenizers.Metaspace()
    hf.decoder = decoders.Metaspace()
    hf.train_from_iterator(corpus_texts, trainers.UnigramTrainer(vocab_size=2000, show_progress=False,
                                                                 unk_token="<unk>", special_tokens=["<unk>"]))
    model = from_hf(json.loads(hf.to_str()))
    itself = 0
    for tid in range(1, model.vocab_size):
        tree = merge_tree(model, tid)
        text, score = model.pieces[tid]
        assert tree.what == PIECE and tree.score == score
        assert "".join(s.text for s in tree.segmentation) == text
        assert [s.id for s in tree.segmentation] == model.encode_word(text)
        itself += [s.id for s in tree.segmentation] == [tid]
    assert itself > 1000
    assert merge_tree(model, 0).what == SPECIAL


def test_a_token_is_named_by_id_bytes_or_exact_text(trainer):
    model = trainer.model()
    assert find_token(model, "#300") == find_token(model, "300") == find_token(model, "id:300") == 300
    assert find_token(model, "x:20") == find_token(model, "␣") == 32
    some = model.base_size + 10
    assert find_token(model, model.token_text(some).replace(" ", "␣")) == some
    with pytest.raises(TokenNotFoundError, match="no token of this model is exactly"):
        find_token(model, "surely-not-a-token")
    with pytest.raises(DecodeError):
        merge_tree(model, 10**6)


def test_the_command_line_draws_the_tree(capsys):
    assert main(["tree", "r50k_base", "␣national", "--width", "80"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "'␣national' id 2260 · merge 2,005"
    assert out[1] == "├─ '␣n' id 299 · merge 44" and out[-1] == "      └─ 'l' id 75 · base"
    assert main(["tree", "r50k_base", "nope-nope-nope"]) == 1
    assert "no token of this model is exactly" in capsys.readouterr().err


def test_a_model_without_ranked_merges_says_it_has_no_tree():
    hf = HFTokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2, "ab": 3}, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    hf.decoder = decoders.WordPiece()
    model = from_hf(json.loads(hf.to_str()))
    tree = merge_tree(model, 3)
    assert tree.what == OTHER and tree.roots == () and tree.data == b"ab"
    assert describe_tree(tree) == ["'ab' id 3: no merge tree — this model's tokens are not built by ranked merges"]
