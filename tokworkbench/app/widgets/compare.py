"""Compare: this session's model beside a second tokenizer loaded from a file.

The encode input tokenized by both, side by side with token counts; the ids whose tokens differ;
both fingerprints and the verdict; under them, the diff's summary (core/inspection/diff.py: tokens
added and removed by their bytes, merges re-ranked, and where the two part on the encode input). A model must never be fed ids from a tokenizer with the same
vocabulary size but other ids, and this is where a user sees why.
"""

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.reactive import var
from textual.widgets import Static

from tokworkbench.app.labels import plural
from tokworkbench.app.render import Palette, draw_tokens, palette_of
from tokworkbench.app.widgets.laidout import WhenLaidOut
from tokworkbench.core.compat import Comparison, compare
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.inspection.diff import ModelDiff, Parting, diff_models, first_parting
from tokworkbench.core.inspection.lock import Text as TextToEncode
from tokworkbench.core.inspection.roundtrip import RoundTrip, round_trip
from tokworkbench.core.session.snapshot import Snapshot

SHORT_FP = 16  # hex digits of a fingerprint shown (the full one is in `tokworkbench compare`)


def describe_comparison(c: Comparison, name_b: str, differences: int = 4) -> Text:
    """The verdict, sizes, fingerprints and the first differing ids, in a few lines."""
    out = Text()
    if c.compatible:
        out.append("✓ compatible", "bold green")
        out.append(": the same ids mean the same tokens", "dim")
    else:
        out.append("✗ INCOMPATIBLE", "bold red")
        out.append(": never feed ids of one to a model trained on the other", "dim")
    out.append(f"\nA this session  V {c.size_a:,}  fp {c.fingerprint_a[:SHORT_FP]}…")
    out.append(f"\nB {name_b}  V {c.size_b:,}  fp {c.fingerprint_b[:SHORT_FP]}…")
    if c.differing:
        out.append(f"\n{plural(c.differing, 'id')} {_differ(c.differing)}: ", "bold")
        out.append(" · ".join(str(d) for d in c.first[:differences]))
        if c.differing > min(len(c.first), differences):
            out.append(f" … and {c.differing - min(len(c.first), differences):,} more", "dim")
    if c.specials_a != c.specials_b:
        out.append("\nthe special tokens or their roles differ", "dim")
    return out


ENCODE_INPUT = "the encode input"


def _differ(n: int) -> str:
    return "differs" if n == 1 else "differ"


def describe_diff(d: ModelDiff, parting: Parting | None, text: str) -> Text:
    """The diff in two lines: what changed in the vocabulary, then where the ids part."""
    out = Text()
    out.append("diff ", "bold")
    parts = [f"{d.shared:,} tokens shared", f"{d.added.count:,} added", f"{d.removed.count:,} removed",
             f"{d.moved.count:,} under another id"]
    if d.merges is not None:
        parts.append(f"{plural(d.reranked.count, 'merge')} re-ranked")
    if d.specials:
        parts.append(f"{plural(len(d.specials), 'special token')} {_differ(len(d.specials))}")
    if d.pipeline:
        parts.append("pipeline: " + ", ".join(w for w, _, _ in d.pipeline) + f" {_differ(len(d.pipeline))}")
    out.append(" · ".join(parts))
    if not text:
        return out
    if parting is None:
        out.append(f"\n{ENCODE_INPUT}: the same ids from both", "dim")
    elif parting.error is not None:
        out.append(f"\nfirst parting: {ENCODE_INPUT}: only one encodes it ({parting.error})", "bold")
    else:
        out.append(f"\nfirst parting: {ENCODE_INPUT} at character {parting.offset:,} (id {parting.index:,})", "bold")
    return out


@dataclass(frozen=True)
class CorpusCounts:
    """Tokens each side makes of the session's corpus (None: that side cannot encode it)."""

    a: int | None
    b: int | None
    nbytes: int


def corpus_counts(a, b, texts: list[str]) -> CorpusCounts:
    def count(model) -> int | None:
        try:
            return sum(len(model.encode_ordinary(t)) for t in texts)
        except TokWorkbenchError:
            return None

    return CorpusCounts(count(a), count(b), sum(len(t.encode("utf-8", "surrogatepass")) for t in texts))


def describe_counts(counts: CorpusCounts | None) -> Text:
    if counts is None:
        return Text("on the corpus: counting both sides…", "dim")

    def side(n: int | None) -> str:
        return "cannot encode it" if n is None else f"{n:,} tokens ({counts.nbytes / max(n, 1):.2f} bytes/token)"

    out = Text("on the corpus: ", "bold")
    out.append(f"A {side(counts.a)} · B {side(counts.b)}")
    if counts.a and counts.b:
        out.append(f" · B/A {counts.b / counts.a:.3f}", "bold")
    return out


def describe_side(name: str, rt: RoundTrip, palette: Palette) -> Text:
    """One side: its name and count, then the text drawn as its tokens, then the ids."""
    out = Text()
    out.append(f"{name}: ", "bold")
    if rt.error:
        out.append("✗ cannot encode: ", "bold red")
        out.append(rt.error)
        return out
    out.append(f"{len(rt.ids):,} tokens\n", "bold")
    out.append_text(draw_tokens(rt.normalized, rt.spans, palette=palette))
    out.append("\nids ", "dim")
    out.append(" ".join(map(str, rt.ids)))
    return out


class ComparePanel(Vertical):
    DEFAULT_CSS = """
    ComparePanel {
        height: 1fr;
    }
    ComparePanel #compare-summary {
        height: auto;
        max-height: 9;
        padding: 0 1;
    }
    ComparePanel #compare-diff {
        height: auto;
        max-height: 4;
        padding: 0 1;
    }
    ComparePanel #compare-sides {
        height: 1fr;
        min-height: 3;
    }
    ComparePanel .compare-side {
        width: 1fr;
        padding: 0 1;
    }
    ComparePanel #compare-a {
        border-right: vkey $primary-darken-1;
    }
    """

    snapshot: var[Snapshot | None] = var(None, always_update=True)
    """The session as the core last reported it: its model is side A."""
    encode_text: var[str] = var("")
    """What is typed in the encode box: the text both sides tokenize."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.other = None  # side B, a Model, once loaded
        self.other_name = ""
        self.texts: list[str] = []  # the session's corpus, which both sides count
        self.comparison: Comparison | None = None
        self.diff: ModelDiff | None = None
        self.counts: CorpusCounts | None = None
        self.parting: Parting | None = None
        self._diffed: tuple[object, object] | None = None  # the two models `diff` and `counts` are of
        self._stale = True
        self._laid_out = WhenLaidOut(self, self.on_show)

    def compose(self) -> ComposeResult:
        yield Static(id="compare-summary")
        yield Static(id="compare-diff")
        with Horizontal(id="compare-sides"):
            with VerticalScroll(id="compare-a", classes="compare-side"):
                yield Static(id="compare-a-text")
            with VerticalScroll(id="compare-b", classes="compare-side"):
                yield Static(id="compare-b-text")

    def on_mount(self) -> None:
        for side in self.query(".compare-side"):
            side.can_focus = False  # keys stay with the screen; the mouse scrolls them
        self._draw()

    def set_other(self, model, name: str, texts: list[str] = ()) -> None:
        """Side B: a tokenizer loaded from `name` (the screen loads it and reports failures);
        `texts`: the corpus both sides count."""
        self.other, self.other_name, self.texts = model, name, list(texts)
        self._changed()

    def _measure(self, a, b) -> None:
        """The vocabulary diff and the corpus counts, in a thread: on two 100k vocabularies
        they take seconds, which the screen must not wait for. Only the newest pair's result
        is kept (a training step makes a new model A)."""
        def work() -> None:
            found = diff_models(a, b, ("this session", self.other_name)), corpus_counts(a, b, self.texts)
            self.app.call_from_thread(self._measured, a, b, *found)

        self.run_worker(work, thread=True, group="compare-diff", exclusive=True, exit_on_error=False)

    def _measured(self, a, b, diff: ModelDiff, counts: CorpusCounts) -> None:
        if self._diffed is not None and self._diffed[0] is a and self._diffed[1] is b:
            self.diff, self.counts = diff, counts
            self._changed()

    def watch_snapshot(self) -> None:
        self._changed()

    def watch_encode_text(self) -> None:
        self._changed()

    def on_show(self) -> None:
        if self._stale:
            self._draw()

    def _changed(self) -> None:
        self._stale = True
        if self.region.area:
            self._draw()
        else:
            self._laid_out.wait()

    def _draw(self) -> None:
        self._stale = False
        summary, a_text, b_text = self.query_one("#compare-summary", Static), \
            self.query_one("#compare-a-text", Static), self.query_one("#compare-b-text", Static)
        diff_text = self.query_one("#compare-diff", Static)
        if self.other is None or self.snapshot is None:
            summary.update(Text("No second tokenizer yet: press C to load one (any model file or a preset); the "
                                "encode input is then tokenized by both, side by side, and the corpus counted "
                                "by both.", "dim"))
            a_text.update("")
            b_text.update("")
            diff_text.update("")
            self.comparison = self.diff = self.parting = None
            return
        model = self.snapshot.model
        text = self.encode_text
        self.comparison = c = compare(model, self.other, text or None)
        described = describe_comparison(c, self.other_name)
        if self._diffed is None or self._diffed[0] is not model or self._diffed[1] is not self.other:
            # the vocabulary diff is kept until either model changes
            self.diff = self.counts = None
            self._diffed = (model, self.other)
            self._measure(model, self.other)
        self.parting = first_parting(model, self.other, [TextToEncode(ENCODE_INPUT, None, text)])[1] if text \
            else None
        shown = describe_diff(self.diff, self.parting, text) if self.diff is not None else \
            Text("diff: comparing the two vocabularies…", "dim")
        shown.append("\n")
        shown.append_text(describe_counts(self.counts))
        diff_text.update(shown)
        if not text:
            described.append("\nType text in the Encode / decode tab: both tokenizers encode it here, side by side.",
                             "dim")
            summary.update(described)
            a_text.update("")
            b_text.update("")
            return
        described.append(f"\ntokens on the encode input: A {c.count_a:,} · B {c.count_b:,}", "bold")
        summary.update(described)
        palette = palette_of(self.app)
        a_text.update(describe_side("A (this session)", round_trip(model, text), palette))
        b_text.update(describe_side(f"B ({self.other_name})", round_trip(self.other, text), palette))
