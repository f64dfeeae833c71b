"""The Unigram views: the lattice drawing, the piece table, the rounds, and the app driven by keys."""

import math

import pytest

from tokworkbench.app.latticedraw import HEAVY, LIGHT, MAX_LANES, draw_lattice, pack_lanes
from tokworkbench.app.render import PALETTES
from tokworkbench.app.widgets.charts import bar_plot
from tokworkbench.app.widgets.pieces import REMOVED, piece_cells
from tokworkbench.app.widgets.rounds import round_cells
from tokworkbench.app.widgets.styledlines import StyledLines
from tokworkbench.core.unigram.rows import Lattice, LatticeEdge, PieceRow, RoundRow


def make_lattice(word: str, costs: dict[str, float], start_cost: float = 0.0) -> Lattice:
    """A lattice built by hand: every piece of `costs` over its spans, and the Viterbi path
    (ties keep the earlier split, as the core's rule)."""
    ids = {p: i for i, p in enumerate(costs)}
    edges = [LatticeEdge(s, e, word[s:e], ids[word[s:e]], costs[word[s:e]])
             for s in range(len(word)) for e in range(s + 1, len(word) + 1) if word[s:e] in costs]
    best = [math.inf] * (len(word) + 1)
    best[0] = start_cost
    back: list[int | None] = [None] * (len(word) + 1)
    for e in range(1, len(word) + 1):
        for i, edge in enumerate(edges):
            if edge.end == e and best[edge.start] + edge.cost < best[e]:
                best[e], back[e] = best[edge.start] + edge.cost, i
    path, e = [], len(word)
    while e > 0 and back[e] is not None:
        path.append(back[e])
        e = edges[back[e]].start
    return Lattice(word, tuple(edges), tuple(reversed(path)), tuple(best), start_cost)


COSTS = {"▁": 2.5, "T": 6.1, "h": 4.2, "i": 3.9, "s": 3.3, "▁T": 7.2, "hi": 6.0, "is": 5.1, "his": 6.8,
         "Th": 8.0, "▁Th": 9.9, "▁This": 9.4}


def plain(line) -> str:
    return "".join(text for text, _ in line)


def test_the_path_is_the_first_lane_in_heavy_lines_with_its_pieces_and_costs():
    lattice = make_lattice("▁This", COSTS, start_cost=1.0)
    assert [lattice.edges[i].piece for i in lattice.path] == ["▁This"]
    drawing = draw_lattice(lattice)
    path = plain(drawing.lanes[0])
    assert drawing.lane_labels[0] == "path"
    assert path.strip().startswith(HEAVY[0]) and path.strip().endswith(HEAVY[2]) and "▁This 9.4" in path
    # every other piece is in some lane, in light lines, at its own columns
    others = "\n".join(plain(line) for line in drawing.lanes[1:])
    for piece in COSTS:
        if piece != "▁This":
            assert piece in others
    assert LIGHT[1] in others and HEAVY[1] not in others
    # the best-cost row starts at the course's 1.0 and ends at the path's total
    best = plain(drawing.head[1])
    assert best.split()[0] == "1.0" and best.split()[-1] == "10.4"


def test_every_piece_sits_under_its_own_characters():
    lattice = make_lattice("▁hugging", {**{c: 3.0 for c in "▁hugin"}, "hug": 4.0, "ing": 4.5, "▁hug": 6.0})
    assert [lattice.edges[i].piece for i in lattice.path] == ["▁hug", "g", "ing"]
    drawing = draw_lattice(lattice)
    slot, lanes = drawing.slot, [plain(line) for line in drawing.lanes]
    chars = plain(drawing.head[0])
    for k, ch in enumerate(lattice.text):  # character k between positions k and k+1
        assert ch in chars[k * slot + 1:(k + 1) * slot]
    for edge in lattice.edges:  # a bracket from position start to position end, the piece inside
        spans = [lane[edge.start * slot:edge.end * slot + 1] for lane in lanes]
        assert any(s[0] in "├┼┣╋" and s[-1] in "┤┫┼╋" and edge.piece in s for s in spans), edge
    # pieces in one lane never overlap
    edges = [(i, e) for i, e in enumerate(lattice.edges) if i not in lattice.path]
    for lane in pack_lanes(edges)[0]:
        spans = sorted((e.start, e.end) for _, e in lane)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


@pytest.mark.parametrize("depth", ["truecolor", "256", "standard", "none"])
def test_the_path_is_styled_apart_at_every_depth_and_without_colour(depth):
    palette = PALETTES[depth]
    drawing = draw_lattice(make_lattice("▁This", COSTS), palette)
    path_styles = {style for text, style in drawing.lanes[0] if text.strip()}
    other_styles = {style for line in drawing.lanes[1:] for text, style in line if text.strip()}
    assert path_styles == {palette.path} and palette.path not in other_styles
    if depth == "none":
        assert "reverse" in palette.path  # without colour the path is still marked


def test_wide_characters_long_words_and_a_word_with_no_path_draw_without_error():
    cjk = make_lattice("▁我喜欢猫", {**{c: 3.0 for c in "▁我喜欢"}, "喜欢": 4.0})
    drawing = draw_lattice(cjk)
    assert drawing.lanes and not cjk.path  # 猫 is not a piece: no path, the pieces still show
    assert "喜欢" in "".join(plain(line) for line in drawing.lanes)
    word = "▁" + "ab" * 600
    long = make_lattice(word, {"▁": 1.0, "a": 1.0, "b": 1.0, "ab": 1.5, "ba": 1.7})
    drawing = draw_lattice(long)
    assert drawing.width >= len(word) * drawing.slot
    assert all(sum(len(t) for t, _ in line) == drawing.width for line in drawing.head + drawing.lanes)


def test_a_word_of_one_repeated_character_is_drawn_in_bounded_lanes():
    """Such a word has a piece at nearly every span (a rule of ━ in a text file does): the
    lanes stop at a limit, and the drawing says how many pieces it left out."""
    word = "━" * 120
    lattice = make_lattice(word, {"━" * k: 1.0 + k / 10 for k in range(1, 40)})
    drawing = draw_lattice(lattice)
    assert len(drawing.lanes) <= 1 + MAX_LANES and drawing.hidden > 0
    drawn = sum(line.count("├") + line.count("┼") for line in map(plain, drawing.lanes[1:]))
    assert drawn + drawing.hidden == len(lattice.edges) - len(lattice.path)  # each piece drawn once, or counted


def test_the_selected_piece_is_marked_wherever_it_appears():
    lattice = make_lattice("▁This", COSTS)
    palette = PALETTES["256"]
    drawing = draw_lattice(lattice, palette, selected=list(COSTS).index("hi"))
    marked = [text for line in drawing.lanes for text, style in line if style == palette.pair]
    assert any("hi" in t for t in marked)


def test_piece_rows_mark_what_the_next_round_removes():
    gone = PieceRow("▁th", 12, -9.3, 4.0, 0.25, True)
    kept = PieceRow("▁the", 13, -5.1, 40.0, 120.5, False)
    char = PieceRow("e", 3, -2.0, 300.0, None, False)
    cells = [piece_cells(k, r) for k, r in enumerate((kept, gone, char), 1)]
    assert cells[1][0] == (REMOVED, "bold") and "strike" in cells[1][1][1]
    assert cells[0][0] == "1" and cells[0][2] == ("120.50", "")
    assert cells[2][2][0] == "—"  # a single character is never removed


def test_round_rows_show_the_loss_change_and_name_what_was_removed():
    seed = RoundRow(0, 300, 1000.0, ())
    one = RoundRow(1, 270, 1012.5, tuple(f"p{i}" for i in range(30)))
    assert round_cells(seed, None)[0] == ("seed", "italic")
    cells = round_cells(one, seed)
    assert cells[3] == ("+12.5", "dim") and cells[4] == "30" and cells[5].endswith("… +18")


def test_the_loss_plot_gives_every_round_a_bar_and_keeps_the_newest_when_thinned():
    rows = bar_plot([100.0, 110.0, 125.0, 190.0], 16, 3)
    assert len(rows) == 3 and rows[-1].count("▁") == 4 and rows[0].endswith("████")
    thin = bar_plot([float(v) for v in range(100)], 20, 2)
    assert max(len(r) for r in thin) <= 20 and thin[0].endswith("█")


# -- the app, driven by keys -----------------------------------------------------------------

from recording import RecordingApp  # noqa: E402
from textual.widgets import Input  # noqa: E402

from tokworkbench.core.session.settings import Settings  # noqa: E402

SIZES = [(160, 48), (80, 24)]
COURSE = ["This is the Hugging Face Course.", "This chapter is about tokenization.",
          "This section shows several tokenizer algorithms.",
          "Hopefully, you will be able to understand how they are trained and generate tokens."]


@pytest.fixture
def course_files(tmp_path):
    """The Hugging Face course's four sentences, one file each."""
    paths = []
    for k, sentence in enumerate(COURSE):
        path = tmp_path / f"{k}.txt"
        path.write_text(sentence, encoding="utf-8")
        paths.append(str(path))
    return paths


def course_app(paths, target=100, **settings) -> RecordingApp:
    return RecordingApp(paths, Settings(kind="unigram", algorithm="course", split="metaspace", seed_size=300,
                                        target=target, **settings))


async def ready(app, pilot):
    await app.workers.wait_for_complete()
    await pilot.pause()
    assert app.main.session is not None and app.main.session.learner.kind == "unigram"


def cells(row) -> list[str]:
    return [c if isinstance(c, str) else c[0] for c in row]


@pytest.mark.parametrize("size", SIZES, ids=["160x48", "80x24"])
async def test_a_round_removes_the_marked_pieces_and_undo_brings_them_back(course_files, size):
    app = course_app(course_files)
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        main = app.main
        assert main.query_one("#pieces").display and not main.query_one("#pairs").display
        assert main.query_one("#rounds").display and not main.query_one("#merges").display
        assert main.check_action("round", ()) is True and main.check_action("step", ()) is False
        before = main.session.snapshot()
        table = main.query_one("#piece-table").rows
        marked = {cells(row)[1] for row in table if cells(row)[0] == REMOVED}
        going = set(main.session.learner.next_step())
        assert marked == going and marked  # the table marks exactly what the round removes
        await pilot.press("n")
        await pilot.pause()
        rounds = main.query_one("#rounds")
        assert main.session.steps == 1 and len(rounds.rows) == 2  # the seed, then round 1
        assert set(main.snapshot.history[-1].removed) == going
        assert cells(rounds.rows[1])[4] == str(len(going))
        assert str(rounds.border_subtitle) == "1 round"
        assert "· 1 round\n" in main.query_one("#corpus-stats", StyledLines).plain
        await pilot.press("u")
        await pilot.pause()
        assert main.session.steps == 0 and main.session.snapshot() == before
        assert {cells(row)[1] for row in main.query_one("#piece-table").rows if cells(row)[0] == REMOVED} == going
        await pilot.press("u")
        await pilot.pause()
        assert any("nothing to undo: no round has been made" in m for m in app.said)


@pytest.mark.parametrize("size", SIZES, ids=["160x48", "80x24"])
async def test_the_lattice_of_this_is_one_piece_with_the_course_start_cost(course_files, size):
    app = course_app(course_files, target=300)  # the course's figure: no pruning yet
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.press("L")
        await pilot.pause()
        assert app.query_one("#bottom").active == "tab-lattice" and app.main.focused.id == "lattice-view"
        app.main.query_one("#encode-input", Input).value = "This"
        await pilot.pause()
        panel = app.main.query_one("#lattice")
        lines = panel.text_lines()
        path = next(line for line in lines if line.startswith("path"))
        assert "▁This" in path and HEAVY[0] in path and HEAVY[2] in path
        assert path.count(HEAVY[3]) == 0  # one piece: no joint on the path
        model = app.main.snapshot.model
        assert [model.token_text(i) for i in model.encode("This")] == ["▁This"]
        info = str(app.main.query_one("#lattice-info").render())
        assert "▁This" in info and "starts at 1 (course)" in info
        best = next(line for line in lines if line.startswith("best")).split()
        assert best[1] == "1.0"  # position 0 costs 1, the course's quirk
        # the corpus: its words one by one with > and <
        app.main.query_one("#encode-input", Input).value = ""
        app.main.query_one("#lattice-view").focus()
        await pilot.pause()
        assert panel.source == "corpus" and panel.word == "▁This" and app.main.lattice_word == "▁This"
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert panel.word == "▁is" and "▁is" in str(app.main.query_one("#lattice-info").render())
        assert "of the word" in app.main.query_one("#corpus-window", StyledLines).plain
        await pilot.press("less_than_sign", "less_than_sign")
        await pilot.pause()
        assert panel.word == "▁This" and any("first word" in m for m in app.said)


async def test_the_piece_the_user_picks_takes_the_lattice_to_a_word_that_holds_it(course_files):
    app = course_app(course_files)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        await pilot.press("L")
        table = app.main.query_one("#piece-table")
        table.focus()
        await pilot.press("down", "down", "down")
        await pilot.pause()
        piece = app.main.snapshot.next_rows[3]
        assert app.main.selected_piece == piece.id
        panel = app.main.query_one("#lattice")
        assert piece.piece in panel.word
        drawn = "\n".join(panel.text_lines())
        assert piece.piece in drawn


async def test_unigram_is_chosen_in_the_settings_and_the_panes_follow(course_files):
    app = RecordingApp(course_files, Settings(split="gpt4"))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.main.check_action("lattice", ()) is False  # BPE: no lattice key, no lattice tab
        await pilot.press("n", "c")
        await pilot.pause()
        dialog = app.screen
        assert dialog.query_one("#seed_size").disabled
        dialog.query_one("#model").value = "unigram"
        dialog.query_one("#split").value = "metaspace"
        await pilot.pause()
        assert not dialog.query_one("#seed_size").disabled and dialog.query_one("#units").disabled
        dialog.query_one("#prune_fraction", Input).value = "1.5"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "between 0 and 1" in str(dialog.query_one("#settings-error").render())
        dialog.query_one("#prune_fraction", Input).value = "0.2"
        dialog.query_one("#target", Input).value = "60"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "1 merge will be discarded" in app.screen.question
        await pilot.press("y")
        await ready(app, pilot)
        settings = app.main.session.settings
        assert (settings.kind, settings.algorithm, settings.prune_fraction, settings.target) == \
            ("unigram", "course", 0.2, 60)
        assert app.main.query_one("#pieces").display and not app.main.query_one("#pairs").display
        assert app.main.focused is app.main.query_one("#piece-table")
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.main.snapshot.vocab_size <= 60
        assert any("reached the target" in m and "rounds in this run" in m for m in app.said)


def steady(app):
    for box in app.screen.query(Input):
        box.cursor_blink = False


@pytest.mark.parametrize("size", SIZES, ids=["160x48", "80x24"])
def test_lattice_tab_snapshot(snap_compare, size, course_files):
    async def run_before(pilot):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("n", "L")
        pilot.app.query_one("#encode-input", Input).value = "Hugging tokenizers"
        await pilot.pause(0.3)
        steady(pilot.app)
        pilot.app.clear_notifications()
        await pilot.pause(0.2)

    assert snap_compare(course_app(course_files), terminal_size=size, run_before=run_before)


async def test_round_trips_the_byte_view_and_the_loss_plot_work_for_unigram(course_files):
    app = course_app(course_files)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        await pilot.press("N")
        await pilot.pause()
        app.main.query_one("#encode-input", Input).value = "Hugging tokenizers, 안녕"
        await pilot.pause()
        shown = str(app.main.query_one("#encode-result").render())
        assert "✗ round trip differs at char 20: '안녕' → '<unk>'" in shown  # not in the corpus: <unk>
        assert "became <unk>" in shown and "normalizer" not in shown
        app.main.query_one("#encode-input", Input).value = "Hugging tokenizers"
        await pilot.pause()
        assert "✓ round trip is lossless" in str(app.main.query_one("#encode-result").render())
        app.query_one("#bottom").active = "tab-bytes"
        await pilot.pause()
        assert app.main.query_one("#bytes").row_text(0)[1] == "▁"
        app.query_one("#bottom").active = "tab-charts"
        await pilot.pause(0.2)
        rounds = app.main.snapshot.history
        title = str(app.main.query_one("#curve-title").render())
        assert f"{rounds[-1].loss:,.1f} at round {rounds[-1].round}" in title
        plot = app.main.query_one("#loss-plot")
        assert plot.display and not app.main.query_one("#compression").display
        assert plot.values == [r.loss for r in rounds] and len(rounds) == 11  # the seed and ten rounds
        assert str(plot.render()).count("\n") == plot.size.height - 1  # as tall as it is drawn


def test_settings_are_worded_and_reproduced_for_each_algorithm():
    from tokworkbench.app.labels import describe_settings, train_command

    course = Settings(kind="unigram", algorithm="course", split="metaspace", seed_size=300, prune_fraction=0.2)
    assert "unigram course" in describe_settings(course) and "prune 0.2" in describe_settings(course)
    command = train_command(course)
    assert "--kind unigram --algorithm course" in command and "--prune-fraction 0.2" in command
    em = course.with_(algorithm="em")
    assert "keep 0.75" in describe_settings(em) and "--shrinking-factor 0.75" in train_command(em)
    assert "--units" not in train_command(em) and "--units byte" in train_command(Settings())


async def test_a_click_on_a_corpus_word_shows_its_lattice_and_history_rows_rewind(course_files, tmp_path):
    app = course_app(course_files)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        app.main.query_one("#encode-input", Input).value = "typed text"
        await pilot.pause()
        text = app.main.query_one("#corpus-text")
        window = app.main.snapshot.window.text
        assert window.startswith("▁This▁is▁the▁Hugging")
        at = window.index("▁Face") - 1  # the last g of Hugging: one cell further is "▁Face"
        await pilot.click(text, offset=(at + 1, 0))  # + the view's left padding; one cell a character here
        await pilot.pause()
        panel = app.main.query_one("#lattice")
        assert app.query_one("#bottom").active == "tab-lattice"
        assert panel.source == "corpus" and panel.word == "▁Hugging" and app.main.lattice_word == "▁Hugging"
        assert text.offset_at(at, 0) == at and text.offset_at(len(window) + 5, 0) is None
        # three rounds, then enter on the seed row of the rounds table undoes them all
        await pilot.press("n", "n", "n")
        rounds = app.main.query_one("#rounds")
        rounds.focus()
        await pilot.press("home", "enter")
        await pilot.pause()
        assert "Undo 3 rounds, back to the seed vocabulary?" in app.screen.question
        await pilot.press("y")
        await pilot.pause()
        assert app.main.session.steps == 0 and len(rounds.rows) == 1
        # saved as a Unigram model file
        await pilot.press("n", "s")
        await pilot.pause()
        app.screen.query_one(Input).value = str(tmp_path / "u.json")
        await pilot.press("enter")
        await pilot.pause()
        import json
        saved = json.loads((tmp_path / "u.json").read_text(encoding="utf-8"))
        assert saved["model"] == "unigram" and any("saved 1 round to" in m for m in app.said)


async def test_the_settings_offer_each_algorithms_own_pruning_option(course_files):
    app = course_app(course_files)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("c")
        await pilot.pause()
        dialog = app.screen
        assert not dialog.query_one("#prune_fraction").disabled and dialog.query_one("#shrinking_factor").disabled
        dialog.query_one("#algorithm").value = "em"
        await pilot.pause()
        assert dialog.query_one("#prune_fraction").disabled and not dialog.query_one("#shrinking_factor").disabled
        dialog.query_one("#shrinking_factor", Input).value = "0.5"
        dialog.query_one("#target", Input).value = "40"  # em stops at the target; its seed here is 57
        await pilot.press("ctrl+s")
        await ready(app, pilot)
        settings = app.main.session.settings
        assert (settings.algorithm, settings.shrinking_factor) == ("em", 0.5)
        assert "keep 0.5" in app.sub_title
        await pilot.press("n")
        await pilot.pause()
        assert app.main.session.steps == 1 and len(app.main.query_one("#rounds").rows) == 2
        await pilot.press("r")
        await app.workers.wait_for_complete()
        await pilot.pause()
        steps = app.main.session.steps
        assert app.main.snapshot.base_size < app.main.snapshot.vocab_size <= 40
        await pilot.press("n")  # em stops at the target, pieces left or not, and says so
        await pilot.pause()
        assert app.main.session.steps == steps and "where em stops" in app.said[-1]


async def test_the_piece_filter_searches_every_piece_and_escape_clears_it(course_files):
    app = course_app(course_files)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("slash", "i", "n", "g")
        await pilot.pause()
        assert app.main.query_one("#piece-filter", Input).value == "ing"
        rows = app.main.snapshot.next_rows
        assert rows and all("ing" in r.piece for r in rows)
        assert len(rows) < app.main.session.learner.vocab_size
        assert "matching ing" in str(app.main.query_one("#pieces").border_subtitle)
        await pilot.press("escape")
        await pilot.pause()
        assert app.main.query_one("#piece-filter", Input).value == "" and app.main.focused.id == "piece-table"
        assert len(app.main.snapshot.next_rows) == app.main.snapshot.rows_in_all > len(rows)


async def test_without_colour_the_path_is_drawn_in_reverse_video(course_files, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    app = course_app(course_files)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("L")
        await pilot.pause()
        drawing = app.main.query_one("#lattice-view").drawing
        assert {style for text, style in drawing.lanes[0] if text.strip()} == {PALETTES["none"].path}


async def test_a_long_word_scrolls_sideways_and_a_very_long_one_is_cut_and_says_so(course_files):
    app = course_app(course_files)
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await pilot.press("L")
        app.main.query_one("#encode-input", Input).value = "tokenization" * 5
        await pilot.pause()
        view = app.main.query_one("#lattice-view")
        view.focus()
        assert view.max_scroll_x > 0 and view.scroll_x == 0
        await pilot.press("right", "right", "right")
        await pilot.pause()
        assert view.scroll_x > 0
        shown = view.render_line(2).text  # the path row, scrolled: the labels stay at the left
        assert shown.startswith("path") and set(shown[6:].strip()) & set(HEAVY)
        app.main.query_one("#encode-input", Input).value = "ab" * 300
        await pilot.pause()
        info = str(app.main.query_one("#lattice-info").render())
        assert "first 500 chars" in info and view.scroll_x == 0
        assert len(view.drawing.head[0][0][0]) > 0 and view.drawing.width >= 500 * view.drawing.slot


async def test_replaying_a_unigram_model_is_worded_in_rounds_and_its_vocabulary_becomes_round_0(course_files,
                                                                                                tmp_path):
    """Not "Undo the 2 merges … replaying 0 merges": a Unigram replay discards the rounds made,
    and the model's vocabulary is the seed (round 0) that the rounds after it prune."""
    app = course_app(course_files)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        await pilot.press("n", "n")
        await pilot.pause()
        saved = app.main.session.save(tmp_path / "u.json")
        vocab = app.main.snapshot.vocab_size
        await pilot.press("n")
        await pilot.pause()
        assert app.main.session.steps == 3
        await pilot.press("l")
        await pilot.pause()
        app.screen.query_one("#replay-path", Input).value = str(saved)
        await pilot.press("enter")
        await pilot.pause()
        question = app.screen.question
        assert question.startswith(f"Undo the 3 rounds made here and replay {saved}?") and "merge" not in question
        assert "Its vocabulary becomes round 0, and the rounds after it prune it." in question
        await pilot.press("y")
        await pilot.pause()
        said = [m for m in app.said if m.startswith("replaying")]
        assert said == [f"replaying {saved}: its vocabulary ({vocab:,} pieces on this corpus) is round 0, "
                        "and each round after it prunes it: n one round, r to the target"], app.said
        assert app.main.session.steps == 0 and app.main.snapshot.vocab_size == vocab


async def test_escape_gives_the_lattices_keys_back_to_the_corpus(course_files):
    """L gives the lattice < and > (its word); escape gave nothing back, as it does for the
    batches pane: only tab did."""
    app = course_app(course_files)
    async with app.run_test(size=(160, 48)) as pilot:
        await ready(app, pilot)
        await pilot.press("L")
        await pilot.pause()
        assert app.main.focused is app.main.query_one("#lattice-view")
        await pilot.press("escape")
        await pilot.pause()
        assert app.main.focused is None
        await pilot.press("greater_than_sign")
        await pilot.pause()
        assert app.main.cursor_span is not None  # the corpus token cursor moved
