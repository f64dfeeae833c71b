"""The vocabulary browser's token kinds and health filter, at 80×24 and 160×48, on three models built
here: SentencePiece BPE with byte fallback (trained by sentencepiece, which judges the byte,
control and unknown pieces and the tokens that do not come back), a BERT vocab.txt (WordPiece
continuations) and tiktoken ranks holding a token no merge makes (tiktoken judges it)."""

import base64
from pathlib import Path

import pytest
import tiktoken
from test_app_dialogs import burst, keys_done
from test_app_inspect import app_from_cli, ready, wait_until
from textual.widgets import Input

import tokworkbench.app as app_package
from tokworkbench.app.widgets.vocab import VocabPanel
from tokworkbench.core.formats.presets import PRESETS, preset_ranks
from tokworkbench.core.formats.tiktoken import parse_ranks
from tokworkbench.core.models.tokenkinds import TokenKind
from tokworkbench.core.text.pretokenize import pre_tokenizer

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is in the test extra; not installed here")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_texts"
SIZES = [(80, 24), (160, 48)]
WHOLE = " việc".encode()


@pytest.fixture(scope="module")
def sp_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("kinds")
    spm.SentencePieceTrainer.train(input=str(SAMPLES / "01_en_genesis_kjv.txt"), model_prefix=str(out / "sp"),
                                   model_type="bpe", vocab_size=500, byte_fallback=True, minloglevel=2,
                                   user_defined_symbols=["<sep>"])
    return out / "sp.model"


@pytest.fixture(scope="module")
def ranks() -> dict[bytes, int]:
    raw, _ = preset_ranks(PRESETS["r50k_base"])
    out = {t: r for t, r in parse_ranks(raw).items() if r < 1000}
    out[WHOLE] = len(out)
    return out


@pytest.fixture(scope="module")
def ranks_file(ranks, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("kinds") / "whole.tiktoken"
    path.write_text("".join(f"{base64.b64encode(t).decode()} {r}\n" for t, r in ranks.items()))
    return path


WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "play", "##ing", "##ed", "##s", "a", "b", "##a", "##b",
         "un", "##do", "!", "The"]


@pytest.fixture(scope="module")
def vocab_txt(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("kinds") / "vocab.txt"
    path.write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def opened(monkeypatch):
    """What `tokworkbench ...` hands the app (test_app_inspect's): run_app is caught instead of run."""
    calls = []
    monkeypatch.setattr(app_package, "run_app", lambda *args: calls.append(args) or 0)
    return calls


async def _browse(app, pilot, query: str) -> VocabPanel:
    await ready(app, pilot)
    burst(app, ["v"])
    await keys_done(app, pilot)
    app.query_one("#vocab-search", Input).value = query
    await pilot.pause()
    return app.query_one(VocabPanel)


def _kinds_drawn(app) -> list[str]:
    return [row[3] if isinstance(row[3], str) else row[3][0] for row in app.query_one("#vocab-table").rows]


@pytest.mark.parametrize("size", SIZES)
async def test_sentencepiece_byte_control_and_unknown_pieces(opened, sp_file, size):
    sp = spm.SentencePieceProcessor(model_file=str(sp_file))
    app = app_from_cli(opened, "-m", str(sp_file))
    async with app.run_test(size=size) as pilot:
        panel = await _browse(app, pilot, "is:byte")
        byte_ids = [i for i in range(sp.get_piece_size()) if sp.is_byte(i)]
        assert panel.page.matched == len(byte_ids) == 256
        assert [r.id for r in panel.page.rows] == byte_ids and set(_kinds_drawn(app)) == {"byte"}
        assert "256 of 256 tokens matching" in str(panel.border_subtitle)
        app.query_one("#vocab-search", Input).value = "is:control is:unk is:user-defined"
        await pilot.pause()
        kinds = {r.id: r.kind for r in panel.page.rows}
        assert kinds == {**{i: TokenKind.CONTROL for i in range(sp.get_piece_size()) if sp.is_control(i)},
                         **{i: TokenKind.UNKNOWN for i in range(sp.get_piece_size()) if sp.is_unknown(i)},
                         sp.piece_to_id("<sep>"): TokenKind.USER_DEFINED}
        # the health filter: the pieces that do not come back, as sentencepiece encodes them
        app.query_one("#vocab-search", Input).value = ""
        panel.set_filters(flag="roundtrip")
        await app.workers.wait_for_complete()
        await wait_until(lambda: panel.report is not None)
        await pilot.pause()
        flagged = [r.id for r in panel.page.rows]
        assert flagged and panel.page.matched == len(panel.report[1].flagged("roundtrip"))
        for tid in flagged:
            assert sp.encode(sp.decode([tid])) != [tid], sp.id_to_piece(tid)
        assert "health: roundtrip" in str(panel.border_subtitle)


@pytest.mark.parametrize("size", SIZES)
async def test_wordpiece_continuations_and_the_kind_key(opened, vocab_txt, size):
    app = app_from_cli(opened, "-m", str(vocab_txt))
    async with app.run_test(size=size) as pilot:
        panel = await _browse(app, pilot, "is:continuation")
        assert [r.data.decode() for r in panel.page.rows] == [w for w in WORDS if w.startswith("##")]
        assert set(_kinds_drawn(app)) == {"continuation"}
        app.query_one("#vocab-search", Input).value = ""
        app.query_one("#vocab-table").focus()
        await pilot.pause()
        await pilot.press("ctrl+o")  # the first kind this vocabulary has
        await pilot.pause()
        assert panel.kind_filter is not None
        assert {r.kind for r in panel.page.rows} == {panel.kind_filter}
        assert f"kind {panel.kind_filter.label}" in str(panel.border_subtitle)


@pytest.mark.parametrize("size", SIZES)
async def test_a_whole_chunk_only_token_and_partial_bytes(opened, ranks_file, ranks, size):
    theirs = tiktoken.Encoding("t", pat_str=pre_tokenizer("gpt4").pattern, mergeable_ranks=ranks, special_tokens={})
    app = app_from_cli(opened, "-m", str(ranks_file), "--split", "gpt4")
    async with app.run_test(size=size) as pilot:
        panel = await _browse(app, pilot, "is:whole-only")
        assert [r.id for r in panel.page.rows] == [ranks[WHOLE]] and _kinds_drawn(app) == ["whole-only"]
        assert theirs.encode_ordinary(WHOLE.decode()) == [ranks[WHOLE]]
        app.query_one("#vocab-search", Input).value = "is:bogus"
        await pilot.pause()
        assert "names no token kind" in str(panel.border_subtitle) and not panel.page.rows
        app.query_one("#vocab-search", Input).value = ""
        panel.set_filters(flag="partial")
        await app.workers.wait_for_complete()
        await wait_until(lambda: panel.report is not None)
        await pilot.pause()
        partial = {t for t, r in ranks.items() if _not_utf8(theirs.decode_single_token_bytes(r))}
        assert {r.id for r in panel.page.rows} == {ranks[t] for t in partial}


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return False
    except UnicodeDecodeError:
        return True
