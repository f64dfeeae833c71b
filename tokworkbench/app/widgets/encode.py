"""Encode / decode: tokens drawn in the text, a round-trip verdict, and hand-typed id decoding.

Four switches, keys on this pane so they work while its boxes have focus: ctrl+t encodes the
text as a document (BOS + content + EOS, by the model's roles), ctrl+g decodes skipping BOS, EOS
and PAD (UNK stays: it stands for text that was there), ctrl+n shows each token's id under it,
ctrl+l shows the text stage by stage (normalizer, pre-tokenizer, model, post-processor, decode).
"""

from dataclasses import replace

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import Input, Static

from tokworkbench.app.messages import EncodeChanged
from tokworkbench.app.render import Palette, palette_of, style_runs
from tokworkbench.app.widgets.laidout import WhenLaidOut
from tokworkbench.app.widgets.pipeline_view import pipeline_text
from tokworkbench.app.widgets.steady_input import SteadyInput
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.inspection.escape import hex_bytes, visible
from tokworkbench.core.inspection.pipeline import pipeline
from tokworkbench.core.inspection.roundtrip import DecodeReport, RoundTrip, decode_report, parse_ids, round_trip
from tokworkbench.core.models.protocol import HasUnknown, Model, OwnDisplay
from tokworkbench.core.models.roles import decode as decode_ids
from tokworkbench.core.models.roles import encode_document, hidden_ids, role_ids
from tokworkbench.core.registry.kinds import kind_of
from tokworkbench.core.session.snapshot import Snapshot


def unknown_id(model: Model) -> int | None:
    """The id what the vocabulary lacks becomes, where the model has one such piece."""
    return model.unk_id if isinstance(model, HasUnknown) else None


class EncodePanel(Vertical):
    DEFAULT_CSS = """
    EncodePanel {
        height: 1fr;
    }
    EncodePanel #encode-scroll {
        height: 1fr;
        padding: 0 1;
    }
    EncodePanel #decode-result {
        height: auto;
        max-height: 6;
        padding: 0 1;
    }
    EncodePanel #encode-result {
        link-style: none;  /* tokens and ids are clickable: not underlined, only the hovered one marked */
    }
    """
    BINDINGS = [
        Binding("ctrl+t", "toggle('add_specials')", "+specials",
                tooltip="Encode as a document: BOS + content + EOS (the model's roles, set in settings)"),
        Binding("ctrl+g", "toggle('skip_special')", "Skip specials",
                tooltip="Decode without BOS, EOS and PAD (UNK is kept)"),
        Binding("ctrl+n", "toggle_ids", "Ids", tooltip="In the encode pane: show each token's id under it"),
        Binding("ctrl+l", "toggle_pipeline", "Pipeline",
                tooltip="In the encode pane: the text stage by stage (normalizer, chunks, tokens, post-processor, "
                "decode)"),
    ]

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its `model` encodes and decodes here."""

    def compose(self) -> ComposeResult:
        yield SteadyInput(placeholder="type text to encode (e.g. 안녕하세요 👋🏽 hello)", id="encode-input")
        with VerticalScroll(id="encode-scroll"):
            yield Static(id="encode-result")
        yield SteadyInput(placeholder="ids to decode, e.g. 236 149 136", id="decode-input")
        yield Static(id="decode-result")

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.add_specials = False  # encode as a document
        self.skip_special = False  # decode without BOS/EOS/PAD
        self.show_ids = False  # each token's id under it (ctrl+n), else the ids on one line
        self.show_pipeline = False  # the text stage by stage (ctrl+l) in place of the tokens
        self.last: RoundTrip | None = None  # what is drawn now (what the copy keys copy)

    def action_toggle(self, switch: str) -> None:
        setattr(self, switch, not getattr(self, switch))
        self._refresh()

    def on_mount(self) -> None:
        self._shown: dict[str, Text] = {}
        self._stale = True
        self._laid_out = WhenLaidOut(self, self.on_show)
        # not a tab stop: shift+tab from the decode box goes straight to the text box
        self.query_one("#encode-scroll").can_focus = False

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if event.input.id == "encode-input":
            self.post_message(EncodeChanged(event.value))
        self._refresh()

    def watch_snapshot(self) -> None:
        if self.region.area:  # off screen (another tab), it catches up when shown
            self._refresh()
        else:
            self._stale = True
            self._laid_out.wait()

    def on_show(self) -> None:
        if self._stale:
            self._refresh()

    def _refresh(self) -> None:
        if self.snapshot is None:
            return
        self._stale = False
        model = self.snapshot.model
        text = self.query_one("#encode-input", Input).value
        rt = self.last = round_trip(model, text) if text else None
        document = None
        if rt is not None and rt.error is None and self.add_specials:
            try:
                document = encode_document(model, text)
            except TokWorkbenchError as exc:
                rt = RoundTrip(text, text, [], [], "", str(exc))
        if self.show_pipeline and text:
            self._update("#encode-result", self._pipeline(model, text))
        else:
            self.show_round_trip(rt, document)
        ids = self.query_one("#decode-input", Input).value
        report, hidden = None, 0
        if ids.strip():
            try:
                wanted = parse_ids(ids)
                if self.skip_special:
                    decode_ids(model, wanted, skip_special=True, errors="replace")  # an id out of range says so
                    hide = hidden_ids(model)
                    kept = [i for i in wanted if i not in hide]
                    hidden, wanted = len(wanted) - len(kept), kept
                report = decode_report(model, wanted)
            except TokWorkbenchError as exc:
                report = DecodeReport([], None, None, str(exc), None)
        self.show_decode(report, hidden)

    def action_toggle_ids(self) -> None:
        self.show_ids = not self.show_ids
        self._refresh()

    @property
    def text(self) -> str:
        return self.query_one("#encode-input", Input).value

    def focus_input(self) -> None:
        self.screen.set_focus(self.query_one("#encode-input", Input))  # now, not later: the keys behind land in it

    def action_toggle_pipeline(self) -> None:
        """The stages take the decode box's room too (the pipeline's last stage is the decode):
        at 80×24 the tab has a few lines."""
        self.show_pipeline = not self.show_pipeline
        for box in ("#decode-input", "#decode-result"):
            self.query_one(box).display = not self.show_pipeline
        self._refresh()

    def _pipeline(self, model: Model, text: str) -> Text:
        names = {tid: role for role, tid in role_ids(model).items()}
        out = pipeline_text(pipeline(model, text), palette_of(self.app), kind_of(model).title, names)
        out.append("\n")
        out.append("[pipeline, ctrl+l]", "bold")
        out.append(" ctrl+l again for the tokens", "dim")
        return out

    def _width(self) -> int:
        """Columns for the token/id rows, leaving room for the scrollbar a long text brings."""
        return max(20, (self.query_one("#encode-scroll").scrollable_content_region.width or 80) - 2)

    def _switches(self, on: bool, what: str, key: str) -> Text:
        """How a switch stands, and whether the model has the roles it needs."""
        out = Text()
        if not on:
            return out
        out.append(f"  [{what}, {key}]", "bold")
        if not role_ids(self.snapshot.model):
            out.append(" this model has no roles: set them in settings (c)", "dim")
        return out

    def show_round_trip(self, rt: RoundTrip | None, document: list[int] | None = None) -> None:
        """`document`: the ids with BOS/EOS when the text is encoded as a document."""
        out = Text()
        if rt is None or not rt.text:
            out.append(f"Type above: {palette_of(self.app).legend}. ctrl+t adds BOS/EOS.", "dim")
            out.append_text(self._switches(self.add_specials, "+specials", "ctrl+t"))
        elif rt.error:
            out.append("✗ cannot encode: ", "bold red")
            out.append(rt.error)
        else:
            palette = palette_of(self.app)
            ids = rt.ids if document is None else document
            names = {tid: role for role, tid in role_ids(self.snapshot.model).items()}
            lead = ids[:1] if document is not None and ids[:1] != rt.ids[:1] else []
            tail = ids[-1:] if document is not None and ids[-1:] != rt.ids[-1:] else []
            for tid in lead:
                out.append(f"⟨{names.get(tid, tid)}⟩", palette.special)
            drawn = drawn_part(rt)
            if self.show_ids:
                out.append_text(ids_under(drawn, self.snapshot.model.token_text, palette, self._width()))
            else:
                out.append_text(clickable_tokens(drawn, palette))
            if drawn is rt:
                for tid in tail:
                    out.append(f"⟨{names.get(tid, tid)}⟩", palette.special)
            if not self.show_ids or document is not None:
                out.append("\n")
                out.append("ids ", "dim")
                for k, tid in enumerate(ids[:DRAWN_TOKENS]):
                    out.append(" " if k else "")
                    out.append(str(tid), _select(tid))
            if drawn is not rt:
                out.append(f"\n… the first {DRAWN_TOKENS:,} of {len(ids):,} tokens are drawn; the counts and the "
                           "round trip below cover the whole text", "dim")
            out.append("\n")
            chars = len(rt.text)
            n = len(ids)
            out.append(f"{n} tokens · {chars} chars · {len(rt.text.encode())} bytes · "
                       f"{chars / n if n else 0:.2f} chars/token  ", "dim")
            if rt.ok:
                out.append("✓ round trip is lossless", "bold green")
            else:
                at = rt.first_difference
                out.append(f"✗ round trip differs at char {at}: ", "bold red")
                out.append(f"{rt.text[at:at + 8]!r} → {rt.decoded[at:at + 8]!r}")
                surface = self.snapshot.model.pre_tokenizer.surface(rt.text)  # metaspace's ▁ are not a change
                if rt.normalized != surface:
                    model = self.snapshot.model
                    own = model.text_normalizer if isinstance(model, OwnDisplay) else None  # SentencePiece's/HF's
                    out.append(f"  (normalized by the model: {own.label}; decoding does not undo it)" if own
                               else "  (the normalizer changed the text)", "dim")
                elif (unk := unknown_id(self.snapshot.model)) is not None and unk in rt.ids:
                    out.append(f"  (characters the vocabulary lacks became {self.snapshot.model.token_text(unk)})",
                               "dim")
            out.append_text(self._switches(self.add_specials, "+specials", "ctrl+t"))
        self._update("#encode-result", out)

    def show_decode(self, report: DecodeReport | None, hidden: int = 0) -> None:
        out = Text()
        if report is None:
            out.append("Decoding shows what strict and replace give, including partial UTF-8 sequences. "
                       "ctrl+g skips BOS/EOS/PAD.", "dim")
            out.append_text(self._switches(self.skip_special, "skip specials", "ctrl+g"))
        elif report.data is None:
            out.append("✗ ", "bold red")
            out.append(report.strict_error or "")
        else:
            out.append("bytes   ", "dim")
            out.append(hex_bytes(report.data) or "(none)")
            if self.skip_special:
                out.append_text(self._switches(True, f"skip specials: {hidden} hidden", "ctrl+g"))
            out.append("\nstrict  ", "dim")
            if report.strict_error:
                out.append("✗ " + report.strict_error, "red")
            else:
                out.append(repr(report.strict), "green")
            out.append("\nreplace ", "dim")
            for piece in (report.replace or "").split("\ufffd")[:-1]:
                out.append(piece)
                out.append("\ufffd", "bold reverse #ff7b7b")
            out.append((report.replace or "").split("\ufffd")[-1])
            for p in report.problems:
                out.append(f"\n  bytes {p.start}–{p.end - 1} ({hex_bytes(report.data[p.start:p.end])}): {p.reason}", "#ff7b7b")
                if p.reason == "unexpected end of data":
                    out.append(" — a partial UTF-8 sequence", "#ff7b7b")
        self._update("#decode-result", out)

    def _update(self, selector: str, text: Text) -> None:
        """Skip unchanged content: an update costs a layout pass of the whole screen."""
        if self._shown.get(selector) != text:
            self._shown[selector] = text
            self.query_one(selector, Static).update(text)


DRAWN_TOKENS = 2_000  # tokens drawn at most: a pasted 50,000 characters took 28 s to lay out in full


def drawn_part(rt: RoundTrip) -> RoundTrip:
    """The first DRAWN_TOKENS tokens of `rt` and the text they cover (`rt` itself when shorter)."""
    if len(rt.ids) <= DRAWN_TOKENS:
        return rt
    spans = rt.spans[:DRAWN_TOKENS]
    end = spans[-1].end if spans else 0
    return replace(rt, text=rt.text[:end], normalized=rt.normalized[:end], ids=rt.ids[:DRAWN_TOKENS], spans=spans)


def _select(tid: int) -> Style:
    return Style.from_meta({"@click": f"screen.select_token({tid})"})


def clickable_tokens(rt: RoundTrip, palette: Palette) -> Text:
    """The text drawn as tokens, each one a click that selects it (the details line)."""
    owners: list[int] = []
    out = Text(no_wrap=False, overflow="fold")
    for (piece, style), k in zip(style_runs(rt.normalized, rt.spans, (), palette, owners), owners):
        out.append(piece, Style.parse(style) + _select(rt.spans[k].token) if k >= 0 and style else style)
    return out


def ids_under(rt: RoundTrip, token_text, palette: Palette, width: int) -> Text:
    """Each token over its id, in columns as wide as the wider of the two, wrapped to `width`:
    the token as text (\\xNN where it holds part of a character), whitespace made visible."""
    out = Text(no_wrap=True, overflow="crop")
    top, bottom, used = Text(), Text(), 0
    for k, tid in enumerate(rt.ids):
        shown, label = visible(token_text(tid)) or "∅", str(tid)
        cell = max(cell_len(shown), len(label))
        if used and used + 1 + cell > width:  # 1: the space between two tokens
            out.append_text(top)
            out.append("\n")
            out.append_text(bottom)
            out.append("\n")
            top, bottom, used = Text(), Text(), 0
        if used:
            top.append(" ")
            bottom.append(" ")
            used += 1
        click = _select(tid)
        top.append(shown + " " * (cell - cell_len(shown)), Style.parse(palette.tokens[k % len(palette.tokens)]) + click)
        bottom.append(label.ljust(cell), Style(dim=True) + click)
        used += cell
    out.append_text(top)
    out.append("\n")
    out.append_text(bottom)
    return out
