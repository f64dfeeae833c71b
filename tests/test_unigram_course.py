"""The HF course's Unigram: its published figures, through the API and the CLI, and the
incremental loss increases held to a plain full recount."""

import copy
import json
import math
from pathlib import Path

import pytest

from tokworkbench.cli import main
from tokworkbench.core.errors import TrainingError
from tokworkbench.core.session.settings import Settings
from tokworkbench.core.unigram import UnigramConfig, UnigramLearner
from tokworkbench.core.unigram.course import COURSE_START_COST
from tokworkbench.core.unigram.viterbi import Vocab, viterbi

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
COURSE = [
    "This is the Hugging Face Course.",
    "This chapter is about tokenization.",
    "This section shows several tokenizer algorithms.",
    "Hopefully, you will be able to understand how they are trained and generate tokens.",
]


def course_learner(**options) -> UnigramLearner:
    return UnigramLearner(COURSE, UnigramConfig(**options))


def course_cost(learner: UnigramLearner) -> dict[str, float]:
    return {p: -s for p, s in zip(learner.state.pieces, learner.state.scores)}


def test_seed_is_the_courses():
    learner = course_learner()
    chars = learner.base_size - 1  # the smallest vocabulary: the characters and <unk>
    assert learner.state.pieces[chars : chars + 10] == ["▁t", "is", "er", "▁a", "▁to", "to", "en", "▁T", "▁Th", "▁Thi"]
    assert learner.state.freqs[chars : chars + 10] == [7, 5, 5, 5, 4, 4, 4, 3, 3, 3]
    assert learner.vocab_size == 301  # the course's 300 pieces and <unk>: every id a model has
    assert learner.words[:3] == ["▁This", "▁is", "▁the"]


def test_published_figures():
    learner = course_learner()
    assert learner.loss == 413.10377642940875
    rows = {r.piece: r for r in learner.next_rows(10_000)[0]}
    assert rows["ll"].loss_increase == 6.376412403623874
    assert rows["his"].loss_increase == 0.0
    vocab = Vocab(course_cost(learner))
    spans, cost = viterbi("Hopefully", vocab, COURSE_START_COST)
    assert ["Hopefully"[a:b] for a, b in spans] == ["H", "o", "p", "e", "f", "u", "ll", "y"]
    assert cost == 41.5157494601402
    spans, cost = viterbi("This", vocab, COURSE_START_COST)
    assert (["This"[a:b] for a, b in spans], cost) == (["This"], 6.288267030694535)


def test_pruning_to_100_tokenizes_as_the_course():
    learner = course_learner()
    rounds = list(learner.run(vocab_size=100))
    assert learner.vocab_size <= 100 < rounds[-2].vocab_size
    model = learner.model()
    tokens = [model.token(i) for i in model.encode("This is the Hugging Face course.")]
    assert tokens == ["▁This", "▁is", "▁the", "▁Hugging", "▁Face", "▁", "c", "ou", "r", "s", "e", "."]


# -- the course's full recount, written plainly, to hold the incremental one to ---------------
def plain_course(words: dict[str, int], seed_size: int, vocab_size: int, fraction: float):
    """The course's loop: every loss increase by a full recount of the corpus loss."""
    chars: dict[str, int] = {}
    subs: dict[str, int] = {}
    for word, f in words.items():
        for i in range(len(word)):
            chars[word[i]] = chars.get(word[i], 0) + f
            for j in range(i + 2, len(word) + 1):
                subs[word[i:j]] = subs.get(word[i:j], 0) + f
    ranked = sorted(subs.items(), key=lambda kv: kv[1], reverse=True)
    freqs = dict(list(chars.items()) + ranked[: seed_size - len(chars)])

    def model_of(freqs):
        total = sum(freqs.values())
        return {t: -math.log(f / total) for t, f in freqs.items()}

    def encode(word, model):
        best = [(0, 1)] + [(None, None)] * len(word)
        for s in range(len(word)):
            here = best[s][1]
            for e in range(s + 1, len(word) + 1):
                if word[s:e] in model and here is not None:
                    score = model[word[s:e]] + here
                    if best[e][1] is None or best[e][1] > score:
                        best[e] = (s, score)
        return best[-1][1]

    def loss(model):
        total = 0
        for word, f in words.items():
            total += f * encode(word, model)
        return total

    model = model_of(freqs)
    history = [(len(model), loss(model), ())]
    while len(model) > vocab_size:
        base = loss(model)
        scores = {}
        for token in model:
            if len(token) > 1:
                without = copy.copy(model)
                del without[token]
                scores[token] = loss(without) - base
        ranked_scores = sorted(scores.items(), key=lambda kv: kv[1])
        gone = [t for t, _ in ranked_scores[: int(len(model) * fraction)]]
        for t in gone:
            del freqs[t]
        model = model_of(freqs)
        history.append((len(model), loss(model), tuple(gone)))
    return history


@pytest.mark.parametrize("seed_size, vocab_size", [(300, 100), (250, 180)])
def test_incremental_rounds_equal_the_full_recount(seed_size, vocab_size):
    text = (SAMPLES / "02_en_devils_dictionary.txt").read_text(encoding="utf-8")[:1500]
    learner = UnigramLearner([text], UnigramConfig(seed_size=seed_size))
    words = dict(zip(learner.words, learner.freqs))
    expected = plain_course(words, seed_size, vocab_size, 0.1)
    list(learner.run(vocab_size=vocab_size + 1))  # the course counts its pieces, a vocabulary <unk> too
    got = [(r.vocab_size - 1, r.loss, r.removed) for r in learner.history_rows(1000)]
    assert got == expected  # floats bit for bit, removed pieces in order


def test_undo_goes_back_exactly():
    learner = course_learner()
    before = [learner.next_rows(400), learner.history_rows(50), learner.model().pieces, learner.total_tokens]
    learner.step()
    learner.step()
    middle = [learner.next_rows(400), learner.history_rows(50), learner.model().pieces, learner.total_tokens]
    learner.step()
    learner.undo()
    assert [learner.next_rows(400), learner.history_rows(50), learner.model().pieces, learner.total_tokens] == middle
    learner.undo()
    learner.undo()
    assert learner.undo() is None
    assert [learner.next_rows(400), learner.history_rows(50), learner.model().pieces, learner.total_tokens] == before


def test_next_rows_mark_what_the_round_removes():
    learner = course_learner()
    rows, total = learner.next_rows(400)
    marked = [r.piece for r in rows if r.removed_next]
    assert total == 300 and len(marked) == 30
    assert rows[:30] == [r for r in rows if r.removed_next]  # removal order first
    record = learner.step()
    assert list(record.removed) == marked
    assert all(r.loss_increase is None for r in rows if len(r.piece) == 1)
    found, count = learner.next_rows(400, "▁T")
    assert count == len(found) and all("▁T" in r.piece for r in found)


def test_lattice_marks_the_course_start_cost():
    learner = course_learner()
    lat = learner.lattice("▁This")
    assert lat.start_cost == 1.0 and lat.best[0] == 1.0
    assert [lat.edges[i].piece for i in lat.path] == ["▁This"]
    assert {(e.start, e.end) for e in lat.edges} >= {(0, 1), (0, 5), (1, 5), (1, 2)}
    assert lat.best[-1] == lat.start_cost + lat.edges[lat.path[0]].cost
    model_lat = learner.model().lattice("▁This")
    assert model_lat.start_cost == 0.0 and [model_lat.edges[i].piece for i in model_lat.path] == ["▁This"]


def test_settings_build_a_unigram_learner():
    settings = Settings(kind="unigram", split="metaspace", seed_size=300, target=100)
    learner = settings.learner(COURSE)
    assert learner.kind == "unigram" and learner.loss == 413.10377642940875
    assert learner.steps_for_vocab(100) == 11
    with pytest.raises(TrainingError, match="distinct characters"):
        learner.steps_for_vocab(10)
    with pytest.raises(TrainingError):
        Settings(kind="unigram", algorithm="nope").config()
    with pytest.raises(TrainingError):
        Settings(kind="trigram").config()


def test_bad_settings_are_one_clear_error():
    with pytest.raises(TrainingError, match="seed size 5 is below"):
        UnigramLearner(COURSE, UnigramConfig(seed_size=5))
    with pytest.raises(TrainingError, match="prune fraction"):
        UnigramConfig(prune_fraction=1.5)


def test_a_single_word_and_a_lone_space_work():
    learner = UnigramLearner(["abcabc"], UnigramConfig(seed_size=20))
    assert learner.words == ["▁abcabc"]
    list(learner.run(vocab_size=5))
    assert learner.model().decode(learner.model().encode("abcabc")) == "abcabc"
    lone = UnigramLearner([" "], UnigramConfig(seed_size=5))
    assert lone.words == ["▁"] and lone.next_step() is None and lone.model().encode(" ") == [1]


# -- the command line ------------------------------------------------------------------------
@pytest.fixture
def course_files(tmp_path):
    paths = []
    for i, sentence in enumerate(COURSE, 1):
        p = tmp_path / f"{i}.txt"
        p.write_text(sentence, encoding="utf-8")
        paths.append(str(p))
    return paths


def test_cli_course_figures(course_files, tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["train", *course_files, "--model", "unigram", "--algorithm", "course", "--split", "metaspace",
                 "--seed-size", "300", "--vocab-size", "301", "-o", str(model)]) == 0
    capsys.readouterr()
    assert main(["encode", "-m", str(model), "This", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tokens"] == ["▁This"]
    assert out["score"] == -(6.288267030694535 - 1)  # the course's cost without its start cost of 1
    doc = json.loads(model.read_text(encoding="utf-8"))
    assert doc["model"] == "unigram" and doc["pieces"][0] == ["<unk>", 0.0] and len(doc["pieces"]) == 301
    assert doc["history"] == [{"round": 0, "vocab_size": 301, "loss": 413.10377642940875, "removed": [],
                               "tokens": 77}]


def test_cli_prunes_and_reports(course_files, tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["train", *course_files, "--model", "unigram", "--vocab-size", "100", "-o", str(model)]) == 0
    assert "11 rounds (course), vocabulary 301 -> 99 (<unk> included)" in capsys.readouterr().out
    doc = json.loads(model.read_text(encoding="utf-8"))
    assert [h["vocab_size"] for h in doc["history"]][:3] == [301, 271, 244] and len(doc["history"]) == 12
    assert main(["encode", "-m", str(model), "--format", "tokens", "This is the Hugging Face course."]) == 0
    assert capsys.readouterr().out.split() == ['"▁This"', '"▁is"', '"▁the"', '"▁Hugging"', '"▁Face"', '"▁"', '"c"',
                                               '"ou"', '"r"', '"s"', '"e"', '"."']
    assert main(["inspect", str(model), "--history-csv", str(tmp_path / "h.csv")]) == 0
    out = capsys.readouterr().out
    assert "unigram (course)" in out and "start each word at cost 1" in out.replace("starts", "start")
    assert (tmp_path / "h.csv").read_text().splitlines()[1].startswith("0,301,413.10377642940875")


def test_cli_bad_sizes(course_files, tmp_path, capsys):
    out = str(tmp_path / "m.json")
    assert main(["train", *course_files, "--model", "unigram", "--vocab-size", "5", "-o", out]) == 1
    assert "is below the distinct characters (30) and <unk>" in capsys.readouterr().err
    assert main(["train", *course_files, "--model", "unigram", "--seed-size", "10", "--vocab-size", "50",
                 "-o", out]) == 1
    assert "--seed-size 10 is below" in capsys.readouterr().err
    assert not Path(out).exists()


def test_cli_nbest_sample_export_and_counts(course_files, tmp_path, capsys):
    model = tmp_path / "m.json"
    assert main(["train", *course_files, "--model", "unigram", "--vocab-size", "100", "-o", str(model)]) == 0
    capsys.readouterr()
    assert main(["encode", "-m", str(model), "--nbest", "3", "--format", "json", "Hopefully"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(lines) == 3 and lines[0]["score"] >= lines[1]["score"] >= lines[2]["score"]
    assert all("".join(line["tokens"]) == "▁Hopefully" for line in lines)
    assert main(["encode", "-m", str(model), "--sample", "--seed", "7", "--format", "tokens", "Hopefully"]) == 0
    first = capsys.readouterr().out
    assert main(["encode", "-m", str(model), "--sample", "--seed", "7", "--format", "tokens", "Hopefully"]) == 0
    assert capsys.readouterr().out == first  # a seed repeats the draw
    assert main(["encode", "-m", str(model), "--nbest", "2", "--sample", "x"]) == 1
    assert "not both" in capsys.readouterr().err
    for fmt, ok in (("hf", 0), ("tiktoken", 1), ("minbpe", 1)):
        assert main(["export", "-m", str(model), "--format", fmt, "-o", str(tmp_path / f"out.{fmt}")]) == ok
    assert "no merges" in capsys.readouterr().err
    counts = tmp_path / "c.npz"
    assert main(["count", *course_files, "--split", "metaspace", "-o", str(counts)]) == 0
    again = tmp_path / "again.json"
    assert main(["train", "--from-counts", str(counts), "--model", "unigram", "--vocab-size", "100",
                 "-o", str(again)]) == 0
    assert json.loads(again.read_text(encoding="utf-8"))["pieces"] == json.loads(model.read_text(encoding="utf-8"))["pieces"]


def test_cli_roles_on_unigram_are_unk_only_and_recorded(course_files, tmp_path, capsys):
    model = tmp_path / "m.json"
    common = ["train", *course_files, "--model", "unigram", "--vocab-size", "200", "-o", str(model)]
    assert main([*common, "--bos", "<s>"]) == 1
    assert "can take only the unk role" in capsys.readouterr().err and not model.exists()
    assert main([*common, "--unk", "<unk>"]) == 0
    assert json.loads(model.read_text(encoding="utf-8"))["roles"] == {"unk": "<unk>"}
    capsys.readouterr()
    assert main(["encode", "-m", str(model), "This"]) == 0
    plain = capsys.readouterr().out
    assert main(["encode", "-m", str(model), "This", "--add-special"]) == 0  # no bos/eos: a note, the same ids
    out, err = capsys.readouterr()
    assert "no token the bos or eos role" in err and out == plain


def test_settings_refuse_special_tokens_for_unigram():
    from tokworkbench.core.errors import TrainingError
    from tokworkbench.core.session.settings import Settings

    with pytest.raises(TrainingError, match="one special token is <unk>"):
        Settings(kind="unigram", split="metaspace", special_tokens=("<s>",)).config()


# -- one long word (issue 28, item 8) ----------------------------------------------------------
def test_the_course_seed_takes_substrings_of_at_most_max_piece_length():
    from tokworkbench.core.unigram.course import seed_course

    word = "".join("abcdefghij"[(i * 7 + i // 10) % 10] for i in range(600))
    pieces, _ = seed_course([word], [1], 10**9)  # every substring the bound lets in
    assert max(map(len, pieces)) == 16
    assert len(pieces) <= 10 + 15 * len(word)  # not the 180,000 substrings of length >= 2
    pieces, _ = seed_course([word], [1], 10**9, max_length=4)
    assert max(map(len, pieces)) == 4


def test_a_chunk_longer_than_sentencepiece_trains_on_is_refused_in_one_line(tmp_path, capsys):
    word = "ab" * 2_500  # with its ▁: 5,003 bytes, past SentencePiece's max_sentence_length
    with pytest.raises(TrainingError, match=r"chunk of 5,003 bytes .*\(4,192 bytes"):
        UnigramLearner([word], UnigramConfig(algorithm="course"))
    corpus = tmp_path / "long.txt"
    corpus.write_text("é" * 60_000, encoding="utf-8")
    assert main(["train", "--model", "unigram", "--algorithm", "course", "-o", str(tmp_path / "m.json"),
                 "--vocab-size", "20", str(corpus)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "max_sentence_length" in err[0]


def test_em_skips_a_line_longer_than_sentencepiece_trains_on_as_spm_train_does(tmp_path, capsys):
    long_line = "ab" * 2_500
    learner = UnigramLearner(["the cat sat\n" * 5 + long_line + "\nthe mat\n"], UnigramConfig(algorithm="em"))
    assert learner.base_size == 3 + len(set("▁thecatsam"))  # <unk> <s> </s> and the short lines' characters: no b
    corpus = tmp_path / "long.txt"
    corpus.write_text("é" * 60_000, encoding="utf-8")
    assert main(["train", "--model", "unigram", "--algorithm", "em", "-o", str(tmp_path / "m.json"),
                 "--vocab-size", "20", str(corpus)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "max_sentence_length" in err[0] and "no line spm_train would train on" in err[0]