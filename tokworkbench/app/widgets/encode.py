"""Encode / decode: tokens drawn in the text, a round-trip verdict, and hand-typed id decoding."""

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import Input, Static

from ...core.errors import TokWorkbenchError
from ...core.inspection.escape import hex_bytes
from ...core.inspection.roundtrip import DecodeReport, RoundTrip, decode_report, parse_ids, round_trip
from ...core.snapshot import Snapshot
from ..messages import EncodeChanged
from ..render import draw_tokens, palette_of
from .steady_input import SteadyInput


def model_has_unk(model) -> bool:
    """Whether id 0 is the `<unk>` that unknown characters become (Unigram)."""
    return model.special_ids.get("<unk>") == 0


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
    """

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its `model` encodes and decodes here."""

    def compose(self) -> ComposeResult:
        yield SteadyInput(placeholder="type text to encode (e.g. 안녕하세요 👋🏽 hello)", id="encode-input")
        with VerticalScroll(id="encode-scroll"):
            yield Static(id="encode-result")
        yield SteadyInput(placeholder="ids to decode, e.g. 236 149 136", id="decode-input")
        yield Static(id="decode-result")

    def on_mount(self) -> None:
        self._shown: dict[str, Text] = {}
        self._stale = True
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

    def on_show(self) -> None:
        if self._stale:
            self._refresh()

    def _refresh(self) -> None:
        if self.snapshot is None:
            return
        self._stale = False
        model = self.snapshot.model
        text = self.query_one("#encode-input", Input).value
        self.show_round_trip(round_trip(model, text) if text else None)
        ids = self.query_one("#decode-input", Input).value
        report = None
        if ids.strip():
            try:
                report = decode_report(model, parse_ids(ids))
            except TokWorkbenchError as exc:
                report = DecodeReport([], None, None, str(exc), None)
        self.show_decode(report)

    def show_round_trip(self, rt: RoundTrip | None) -> None:
        out = Text()
        if rt is None or not rt.text:
            out.append("Type above: tokens are drawn with alternating backgrounds; red marks a character a token cuts.", "dim")
        elif rt.error:
            out.append("✗ cannot encode: ", "bold red")
            out.append(rt.error)
        else:
            out.append_text(draw_tokens(rt.normalized, rt.spans, palette=palette_of(self.app)))
            out.append("\n")
            out.append("ids ", "dim")
            out.append(" ".join(map(str, rt.ids)))
            out.append("\n")
            chars = len(rt.text)
            n = len(rt.ids)
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
                    out.append("  (the normalizer changed the text)", "dim")
                elif 0 in rt.ids and model_has_unk(self.snapshot.model):
                    out.append("  (characters the vocabulary lacks became <unk>)", "dim")
        self._update("#encode-result", out)

    def show_decode(self, report: DecodeReport | None) -> None:
        out = Text()
        if report is None:
            out.append("Decoding shows what strict and replace give, including partial UTF-8 sequences.", "dim")
        elif report.data is None:
            out.append("✗ ", "bold red")
            out.append(report.strict_error or "")
        else:
            out.append("bytes   ", "dim")
            out.append(hex_bytes(report.data) or "(none)")
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
