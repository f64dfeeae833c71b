"""How a token came to be: the merges that build a BPE token, or a Unigram piece's own lattice.

The details line names a token's two parents; the tree follows them down to the base units, so
one can see that ' ational' is ' at' + 'ional' and where each part was merged (its merge number,
and how often the trainer counted the pair when it merged it, where there is training history).
Known answer: the leaves of a tree, joined, are the token's bytes.

A token no merge makes (`WholeOnly`: Llama 3's ' việc') is reached only as a whole chunk; its
tree is what the merges alone build from its bytes, which is several tokens. A Unigram piece has
no merges: it has its score, and the best segmentation of its own text (usually itself; a piece
whose parts together score better is never chosen for its own text).

The drawing is plain text with box-drawing characters, for the terminal and the command line:
lines fit `width` columns, and a subtree that would start too far right is drawn again below,
from the left margin (a fold), with a marker where it was.
"""

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from tokworkbench.core.errors import TokenNotFoundError
from tokworkbench.core.inspection.escape import quote, render_bytes
from tokworkbench.core.inspection.vocab import parse_query, rows_holding, vocab_of
from tokworkbench.core.models.protocol import HasLattice, MergeRanked, Model, Scored, WholeOnly

MERGED, BASE, WHOLE, SPECIAL, PIECE, OTHER = "merged", "base", "whole", "special", "piece", "other"


@dataclass(frozen=True)
class MergeNode:
    id: int  # outside id
    data: bytes
    step: int | None  # the merge that made it (1 = the first); None for a base unit
    count: int | None  # the pair's count when it was merged (training history), else None
    children: tuple["MergeNode", ...] = ()  # its two parents; none for a base unit

    @property
    def text(self) -> str:
        return render_bytes(self.data)

    def leaves(self) -> list["MergeNode"]:
        out, todo = [], [self]
        while todo:
            node = todo.pop()
            if node.children:
                todo.extend(reversed(node.children))
            else:
                out.append(node)
        return out


@dataclass(frozen=True)
class Segment:
    """One piece of a Unigram segmentation."""

    id: int
    text: str
    score: float


@dataclass(frozen=True)
class TokenTree:
    id: int
    data: bytes
    what: str  # MERGED, BASE, WHOLE (whole chunk only), SPECIAL, PIECE (Unigram), OTHER
    roots: tuple[MergeNode, ...] = ()  # the token's own tree; for WHOLE what the merges build instead
    score: float | None = None  # PIECE: its log probability
    segmentation: tuple[Segment, ...] = ()  # PIECE: the best segmentation of its own text

    @property
    def text(self) -> str:
        return render_bytes(self.data)


def find_token(model: Model, spec: str) -> int:
    """The id a user names: `#N`, `id:N` or a bare number; hex bytes (`x:e6 97`); else the
    token whose text is exactly `spec` (␣ ↵ → standing for space, line feed and tab, as the
    views draw them). The vocabulary browser's query forms, asking for one token."""
    if spec.strip().isdigit():
        return int(spec.strip())
    what, needle = parse_query(spec)
    if what == "ids":
        return needle[0]
    vocab = vocab_of(model)
    if what == "all":
        raise TokenNotFoundError("name a token: its id (#123), its text, or its bytes (x:e6 97)")
    found = [r for r in rows_holding(vocab, needle).tolist() if vocab.data[r] == needle]
    if not found:
        raise TokenNotFoundError(f"no token of this model is exactly {quote(spec)} (name one by id: #123)")
    ordinary = [r for r in found if not vocab.special[r]]
    return int(vocab.ids[(ordinary or found)[0]])


def step_counts(history: Iterable) -> dict[int, int]:
    """Merge number -> the pair's count when merged, from a trainer's history (MergeRecords)."""
    return {record.step: record.count for record in history}


def merge_tree(model: Model, tid: int, counts: Mapping[int, int] | None = None) -> TokenTree:
    """The tree of token `tid` (outside id); a DecodeError for an id the model does not have."""
    return merge_trees(model, [tid], counts)[0]


def merge_trees(model: Model, ids: Iterable[int], counts: Mapping[int, int] | None = None) -> list[TokenTree]:
    """`merge_tree` of each id, sharing the subtrees they have in common (each built once)."""
    made: dict[int, MergeNode] = {}
    return [_tree(model, tid, counts or {}, made) for tid in ids]


def _tree(model: Model, tid: int, counts: Mapping[int, int], made: dict[int, MergeNode]) -> TokenTree:
    if isinstance(model, MergeRanked):
        vocab = vocab_of(model)
        row = vocab.row_of(tid)
        data = vocab.data[row]
        if vocab.special[row]:
            return TokenTree(tid, data, SPECIAL)
        if vocab.whole_only[row] and isinstance(model, WholeOnly):
            parts = model.to_outside(_merges_alone(model, row))
            return TokenTree(tid, data, WHOLE, tuple(_node(vocab, part, counts, made) for part in parts))
        node = _node(vocab, tid, counts, made)
        return TokenTree(tid, data, MERGED if node.children else BASE, (node,))
    data = model.token_bytes(tid)
    if tid in set(model.special_ids.values()):
        return TokenTree(tid, data, SPECIAL)
    if isinstance(model, Scored) and isinstance(model, HasLattice):
        text, score = model.pieces[tid]
        lattice = model.lattice(text)
        path = tuple(Segment(e.id, e.piece, -e.cost) for e in (lattice.edges[i] for i in lattice.path))
        return TokenTree(tid, data, PIECE, score=score, segmentation=path)
    return TokenTree(tid, data, OTHER)


def _merges_alone(model, row: int) -> list[int]:
    """The inside ids the merges alone make of a token's base units (no whole-chunk lookup)."""
    token = model.ranked_tokens[row]
    if isinstance(token, bytes):
        return model.apply_merges(list(token))
    base = {t: i for i, t in enumerate(model.ranked_tokens[: model.base_size])}
    return model.apply_merges([base[ch] for ch in token])


def _node(vocab, tid: int, counts: Mapping[int, int], made: dict[int, MergeNode]) -> MergeNode:
    """Built bottom-up with a stack of its own (a long token's chain of merges is deeper than
    Python's recursion limit allows); `made` holds the nodes built so far."""
    todo = [tid]
    while todo:
        t = todo[-1]
        if t in made:
            todo.pop()
            continue
        row = vocab.row_of(t)
        step = int(vocab.steps[row]) or None
        parents = (int(vocab.left[row]), int(vocab.right[row])) if step else ()
        waiting = [p for p in parents if p not in made]
        if waiting:
            todo.extend(waiting)
            continue
        todo.pop()
        made[t] = MergeNode(t, vocab.data[row], step, counts.get(step) if step else None,
                            tuple(made[p] for p in parents))
    return made[tid]


# -- drawing ---------------------------------------------------------------------------------
def cells(text: str) -> int:
    """Terminal columns `text` takes: wide East Asian characters two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def fit(text: str, width: int) -> str:
    if cells(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        if used + cells(ch) > width - 1:
            break
        out.append(ch)
        used += cells(ch)
    return "".join(out) + "…"


def node_label(node: MergeNode, width: int = 80, note: str = "") -> str:
    """'text' id N · merge M · count×, the text shortened first so the numbers stay in `width`."""
    tail = f" id {node.id}" + (" · base" if node.step is None else f" · merge {node.step:,}")
    if node.step is not None and node.count is not None:
        tail += f" · {node.count:,}×"
    tail += note
    return fit(fit(quote(node.text), max(6, width - cells(tail))) + tail, width)


def draw_nodes(roots: Iterable[MergeNode], width: int = 80, fold_at: int | None = None) -> list[str]:
    """The trees as lines of at most `width` columns. A subtree drawn once is not drawn again
    (its root is marked "as above"). A node deeper than `fold_at` levels (by default, where the
    guides would take a third of the width) is drawn as a marker, and its subtree again after
    the rest, from the left margin."""
    fold_at = fold_at if fold_at is not None else max(2, width // 9)
    lines: list[str] = []
    folded: list[MergeNode] = []
    drawn: set[int] = set()
    queue = [(root, False) for root in roots]
    while queue:
        root, continued = queue.pop(0)
        if lines:
            lines.append("")
        lines.append(node_label(root, width, "  ↳ folded from above" if continued else ""))
        drawn.add(root.id)
        stack = [(child, "", k == len(root.children) - 1, 1) for k, child in reversed(list(enumerate(root.children)))]
        while stack:
            node, guide, last, depth = stack.pop()
            lead = guide + ("└─ " if last else "├─ ")
            room = width - cells(lead)
            if node.children and node.id in drawn:
                lines.append(lead + node_label(node, room, "  (as above)"))
                continue
            if depth > fold_at and node.children:
                lines.append(lead + node_label(node, room, "  ⤵ below"))
                folded.append(node)
                continue
            lines.append(lead + node_label(node, room))
            if node.children:
                drawn.add(node.id)
            below = guide + ("   " if last else "│  ")
            n = len(node.children)
            stack.extend((child, below, k == n - 1, depth + 1) for k, child in reversed(list(enumerate(node.children))))
        queue.extend((node, True) for node in folded)
        folded = []
    return lines


def describe_tree(tree: TokenTree, width: int = 80) -> list[str]:
    """What the CLI prints and the app's merge tree shows: a heading and the drawing."""
    head = f"{quote(tree.text)} id {tree.id}"
    if tree.what == SPECIAL:
        return [fit(f"{head}: a special token; no merge makes it", width)]
    if tree.what == OTHER:
        return [fit(f"{head}: no merge tree — this model's tokens are not built by ranked merges", width)]
    if tree.what == PIECE:
        lines = [fit(f"{head}: a Unigram piece, score {tree.score:.4f}; no merges", width),
                 "best segmentation of its own text:"]
        for seg in tree.segmentation:
            lines.append(fit(f"  {quote(seg.text)} id {seg.id} · score {seg.score:.4f}", width))
        if [s.id for s in tree.segmentation] == [tree.id]:
            lines.append("  (itself: the piece is what Viterbi picks for its own text)")
        return lines
    if tree.what == WHOLE:
        parts = " + ".join(quote(r.text) for r in tree.roots)
        return [fit(f"{head}: whole chunk only — no merge makes it; a chunk reaches it by being it whole", width),
                fit(f"the merges alone build {len(tree.roots)} tokens from its bytes: {parts}", width), "",
                *draw_nodes(tree.roots, width)]
    if tree.what == BASE:
        return [fit(f"{head}: a base unit; no merge makes it, every merged token is built of these", width)]
    return draw_nodes(tree.roots, width)
