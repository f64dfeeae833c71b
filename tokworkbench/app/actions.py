"""The main screen's keys as data: each action's keys, words, kinds, and when it can act.

The bindings, the footer, `check_action`, the explanation of a dimmed key, help and the command
palette all read this one table, so a key's rules are written once.
"""

from dataclasses import dataclass
from enum import Enum

from textual.actions import parse
from textual.binding import Binding

from tokworkbench.app.kind_views import kinds_where


@dataclass(frozen=True)
class Situation:
    """What decides whether a key can act: the screen's state, read at the moment of asking."""

    kind: str  # the model kind on screen
    has_session: bool
    loading: bool
    running: bool
    run_stopped: bool  # the run's child has stopped; its state is still coming back
    inspecting: bool  # a loaded tokenizer shown frozen (-m)
    typing: bool  # a text box has focus: every printable key is a character for it
    grabbed: bool  # a pane that takes the keys (the batches, the lattice) has focus
    steps: int
    can_step: bool
    cramped: bool  # the terminal is too small for the workbench: only the notice saying so shows
    exhausted: str  # why no step is left, in the words of the kind
    noun: str  # what one step is called (merge, round)


class Need(Enum):
    """A condition an action needs; each knows how to say it is not met."""

    IDLE = "idle"  # a session, no run and no load
    FREE = "free"  # no run and no load: opening a corpus needs no session (the first load may have failed)
    TRAINING = "training"  # a session that trains (not an inspected tokenizer)
    MADE = "made"  # a step has been made
    LEFT = "left"  # a step is left to make
    STOPPABLE = "stoppable"  # something escape leaves: a run, a text box, the batches pane
    ROOM = "room"  # the workbench is on screen, so what the key does can be seen

    @property
    def hides(self) -> bool:
        """Unmet, it hides the key rather than dimming it: escape with nothing to leave is
        Textual's own (it closes the palette, a maximized pane), not a key that cannot act."""
        return self is Need.STOPPABLE

    def met(self, s: Situation) -> bool:
        if self is Need.IDLE:
            return s.has_session and not s.running and not s.loading
        if self is Need.FREE:
            return not s.running and not s.loading
        if self is Need.TRAINING:
            return not s.inspecting
        if self is Need.MADE:
            return s.steps > 0
        if self is Need.LEFT:
            return s.can_step
        if self is Need.ROOM:
            return not s.cramped
        return s.running or s.typing or s.grabbed

    def why(self, s: Situation) -> str:
        if self is Need.TRAINING:
            return "a loaded tokenizer is inspected, not trained (start without -m to train one)"
        if self in (Need.IDLE, Need.FREE):
            if s.run_stopped:
                return "the run has stopped and its state is coming back into the session: a moment"
            if s.running:
                return "a run is going: escape cancels it"
            if s.loading:
                return "the corpus is still loading"
            return "no corpus is loaded: o opens one"
        if self is Need.MADE:
            return f"nothing to undo: no {s.noun} has been made"
        if self is Need.LEFT:
            return s.exhausted
        if self is Need.ROOM:
            return "the terminal is too small to show what it would do: make it larger (nothing is lost)"
        return "nothing to cancel or leave"


@dataclass(frozen=True)
class Action:
    """One key of the main screen. `kinds`: the model kinds it belongs to (None: every kind);
    for another kind it is hidden, not dimmed. `in_box`: it acts while a text box has focus
    (else the box takes the key as a character)."""

    action: str  # the method, as Textual names it: "step", "document(-1)"
    keys: str  # Textual's key names, comma-separated: "n,space"
    label: str  # the footer's word
    tooltip: str  # help's line
    needs: tuple[Need, ...] = ()
    kinds: frozenset[str] | None = None
    show: bool = False  # in the footer
    # runs as the key arrives: it opens a dialog or moves focus, or it is a step, whose frame is
    # then not kept waiting for the key's round trip through the focused widget's ancestors
    priority: bool = False
    in_box: bool = False
    anywhere: bool = False  # it acts while the terminal is too small for the workbench (quit, escape)

    @property
    def key_list(self) -> list[str]:
        return self.keys.split(",")

    def binding(self) -> Binding:
        return Binding(self.keys, self.action, self.label, show=self.show, priority=self.priority,
                       tooltip=self.tooltip)

    def unmet(self, s: Situation) -> Need | None:
        """The first need not met now, or None. A key acts on a screen too small to show the
        workbench only if it says so (`anywhere`): n and u merged and undid unseen there."""
        if s.cramped and not self.anywhere:
            return Need.ROOM
        return next((need for need in self.needs if not need.met(s)), None)

    def state(self, s: Situation) -> bool | None:
        """check_action's answer: True acts, None dims (and `why` says why), False hides."""
        if self.kinds is not None and s.kind not in self.kinds:
            return False  # the other kind's key: n is Merge for BPE and Round for Unigram
        if s.typing and not self.in_box:
            return False  # the key is a character the box takes
        need = self.unmet(s)
        if need is None:
            return True
        return False if need.hides else None

    def why(self, s: Situation) -> str:
        need = self.unmet(s)
        return need.why(s) if need is not None else ""


STEP = (Need.TRAINING, Need.IDLE, Need.LEFT)
UNDO = (Need.TRAINING, Need.IDLE, Need.MADE)
DIALOG = (Need.IDLE,)
# each kind's own keys, from the app's one table of kinds (app/kind_views.py)
MERGING = kinds_where(lambda view: view.step_key == "step")  # n merges
ROUNDS = kinds_where(lambda view: view.step_key == "round")  # n prunes a round
LATTICED = kinds_where(lambda view: view.lattice)  # L and the lattice tab
TABS = (("tab-encode", "Encode / decode"), ("tab-bytes", "UTF-8 bytes"), ("tab-lattice", "Lattice"),
        ("tab-charts", "Compression (Unigram: loss)"), ("tab-batches", "Batches"), ("tab-compare", "Compare"),
        ("tab-vocab", "Vocabulary"), ("tab-arena", "Arena"))

# footer order: the most used first; the footer shows what fits and ends in ? (help lists them all)
ACTIONS: tuple[Action, ...] = (
    Action("step", "n,space", "Merge", "Merge the best pair (one step)", STEP, kinds=MERGING, show=True,
           priority=True),
    Action("round", "n,space", "Round", "Unigram: one pruning round (one step)", STEP, kinds=ROUNDS, show=True,
           priority=True),
    Action("step_ten", "N", "×10", "Ten merges (Unigram: ten rounds)", STEP, show=True, priority=True),
    Action("run", "r", "Run", "Run to the target vocabulary in the background", STEP, show=True),
    Action("escape", "escape", "Cancel", "Stop a running training between two steps; leave a text box",
           (Need.STOPPABLE,), show=True, priority=True, in_box=True, anywhere=True),
    Action("undo", "u,backspace", "Undo", "Undo the last merge (or round) exactly", UNDO, show=True,
           priority=True),
    Action("save", "s", "Save", "Save the model (atomic; asks before overwriting)", DIALOG, show=True,
           priority=True),
    Action("help", "question_mark", "Help", "All keys", show=True, priority=True),
    Action("quit_app", "q", "Quit", "Quit (asks if the model is unsaved)", show=True, priority=True, anywhere=True),
    Action("settings", "c", "Settings", "Model (BPE, Unigram or SentencePiece BPE), units, normalizer, "
           "pre-tokenizer, tie-break",
           (Need.TRAINING, Need.IDLE), show=True, priority=True),
    Action("set_target", "t", "Target", "Set the target vocabulary size", (Need.TRAINING, Need.IDLE),
           show=True, priority=True),
    Action("reset", "R", "Reset", "Back to the base vocabulary (Unigram: the seed)", UNDO, show=True,
           priority=True),
    Action("open", "o", "Open", "Open corpus files or folders", (Need.FREE,), show=True, priority=True),
    Action("export", "e", "Export", "Export to HF tokenizer.json, tiktoken, minbpe, SentencePiece .model or "
           "vocab.txt (as the kind allows), or the history as CSV",
           DIALOG, show=True, priority=True),
    Action("replay", "l", "Replay", "Load a tokenizer and replay its merges on this corpus",
           (Need.TRAINING, Need.IDLE), show=True, priority=True),
    Action("filter_pairs", "slash", "Filter", "Filter the pair table (Unigram: the piece table)", show=True,
           priority=True),
    Action("lattice", "L", "Lattice", "Unigram: the Viterbi lattice of a word (of the encode box, else the corpus)",
           kinds=LATTICED, show=True, priority=True),
    Action("batches", "b", "Batches", "Show the Batches tab and give it the keys (T, B, seed, mode, write .npz)",
           show=True, priority=True),
    Action("compare", "C", "Compare", "Load a second tokenizer (or a preset: cl100k_base, o200k_base, gpt2) "
           "and compare it with this one on the encode input", DIALOG, show=True, priority=True),
    Action("arena", "A", "Arena", "Choose the tokenizers the Arena tab scores beside this one on the corpus "
           "(presets: cl100k_base, o200k_base, gpt2; or files)", priority=True),
    Action("vocabulary", "v", "Vocab", "Search the vocabulary: by text, #id, or hex bytes (x:e6 97)",
           priority=True),
    Action("document(-1)", "comma", "Prev doc", "Show the previous document"),
    Action("document(1)", "full_stop", "Next doc", "Show the next document"),
    Action("window(-1)", "left_square_bracket", "Prev window", "Show the previous window of this document"),
    Action("window(1)", "right_square_bracket", "Next window", "Show the next window of this document"),
    Action("token(-1)", "less_than_sign", "Prev token",
           "Select the previous token in the corpus window; its details show below"),
    Action("token(1)", "greater_than_sign", "Next token",
           "Select the next token in the corpus window; its details show below"),
    Action("toggle_ids", "i", "Ids", "Show the encode pane's ids under its tokens, or not"),
    Action("toggle_pipeline", "p", "Pipeline", "Show the encode box's text stage by stage (normalizer, chunks, "
           "tokens, post-processor, decode), or its tokens"),
    Action("merge_tree", "m", "Tree", "The merges that build the selected token, as a tree (Unigram: its score "
           "and segmentation)"),  # not priority: the batches pane's m (its mode) wins while it has the keys
    Action("copy('ids')", "y", "Copy ids", "Copy the ids of the encode box's text (else the selected token's)"),
    Action("copy('tokens')", "Y", "Copy tokens",
           "Copy the tokens of the encode box's text (else the selected token) as JSON strings"),
    *(Action(f"show_tab('{tab}')", str(n), title.split(" (")[0], f"Show the {title} tab",
             kinds=LATTICED if tab == "tab-lattice" else None, priority=True)
      for n, (tab, title) in enumerate(TABS, 1)),
)

_BY_CALL = {parse(a.action)[1:]: a for a in ACTIONS}


def lookup(name: str, parameters: tuple) -> Action | None:
    """The action `check_action` is asked about (Textual passes the name and its parameters
    apart: "document", (-1,)), or None for one outside this table."""
    return _BY_CALL.get((name, tuple(parameters)))


def key_names(keys: str, display) -> str:
    """"n,space" as help shows it: each key as the footer writes it ("n / space", "?", "/")."""
    return " / ".join(display(Binding(key, "")) for key in keys.split(","))
