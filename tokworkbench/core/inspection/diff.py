"""What changed between two versions of a tokenizer, as one report (`diff_models`).

Tokens are matched by their bytes, never by their ids: a token is *added* when B has bytes A
has no token for, *removed* the other way, and *moved* when both have it under other ids. The
special tokens are compared by their strings, apart. Merges (models with the MergeRanked
capability) are matched by their two parts' bytes, and a merge whose rank differs is *re-ranked*;
pieces of two scored models (Unigram) by their text, and one whose score differs is *rescored*.
The pipeline is what each model says of itself: kind, units, normalizer, pre-tokenizer pattern
and the lines its kind adds (`describe`, Kind.describe: the caller passes it, the
registry being a layer above). Given texts, the first text whose content ids differ is named
with the id where the runs part and the character there (lockcheck.char_offset, in B's view).

The writers (`diff_lines`, `diff_json`, `diff_markdown`) are here until core/inspection's
shared report writers take them over.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from tokworkbench.core.compat import fingerprint, id_table
from tokworkbench.core.errors import TokWorkbenchError
from tokworkbench.core.inspection.escape import quote, render_bytes
from tokworkbench.core.inspection.lock import Text
from tokworkbench.core.inspection.lockcheck import AROUND, CONTEXT, char_offset, first_index
from tokworkbench.core.inspection.reports import Column, to_csv
from tokworkbench.core.models.protocol import MergeRanked, OwnDisplay, Scored
from tokworkbench.core.models.roles import encode_content
from tokworkbench.core.units import Units

SHOW = 10  # examples kept of each kind of change


@dataclass(frozen=True)
class TokenChange:
    token: bytes
    id_a: int | None  # None: A has no such token
    id_b: int | None


@dataclass(frozen=True)
class MergeChange:
    left: bytes
    right: bytes
    rank_a: int | None
    rank_b: int | None


@dataclass(frozen=True)
class ScoreChange:
    piece: str
    score_a: float
    score_b: float


@dataclass(frozen=True)
class Changes:
    """How many of one kind of change, and the first `SHOW` of them."""

    count: int = 0
    first: tuple = ()


@dataclass(frozen=True)
class Parting:
    where: str
    text_number: int
    index: int
    offset: int | None  # None when one model cannot encode the text
    context: str
    context_at: int
    run_a: tuple[tuple[int, int, str], ...]  # (position, id, token) around `index`
    run_b: tuple[tuple[int, int, str], ...]
    count_a: int
    count_b: int
    error: str | None = None


@dataclass(frozen=True)
class ModelDiff:
    names: tuple[str, str]
    kinds: tuple[str, str]
    sizes: tuple[int, int]
    fingerprints: tuple[str, str]
    shared: int  # tokens (by bytes) both have
    added: Changes
    removed: Changes
    moved: Changes  # the same bytes under another id
    specials: tuple[TokenChange, ...]  # special tokens (UTF-8 of their strings) added, removed or moved
    merges: tuple[int, int] | None  # each model's merges, when both are merge-ranked
    merges_shared: int = 0
    merges_added: Changes = field(default_factory=Changes)
    merges_removed: Changes = field(default_factory=Changes)
    reranked: Changes = field(default_factory=Changes)
    scored: bool = False  # both models score their pieces (the Scored capability)
    rescored: Changes = field(default_factory=Changes)  # pieces both have, with another score
    pipeline: tuple[tuple[str, str, str], ...] = ()  # (what, A's, B's) where they differ
    texts: int = 0  # texts both encoded alike before `parting` (all of them when it is None)
    parting: Parting | None = None

    @property
    def identical(self) -> bool:
        """Nothing that changes ids or what they mean: same tokens, specials, merges, pipeline
        and, on the texts given, the same ids."""
        return (self.fingerprints[0] == self.fingerprints[1] and not self.pipeline and self.parting is None
                and not (self.reranked.count or self.merges_added.count or self.merges_removed.count
                         or self.rescored.count))


# -- the comparison -------------------------------------------------------------------------
def ordinary_tokens(model, table: dict[int, bytes] | None = None) -> dict[bytes, int]:
    """bytes -> id of every token that is not special (the lowest id where bytes repeat);
    `table` is compat.id_table(model), when the caller has it."""
    table = id_table(model) if table is None else table
    specials = set(model.special_ids.values())
    out: dict[bytes, int] = {}
    for i in sorted(table):
        if i not in specials:
            out.setdefault(table[i], i)
    return out


def compare_tokens(ta: dict[bytes, int], tb: dict[bytes, int], show: int = SHOW) -> tuple[int, Changes, Changes,
                                                                                            Changes]:
    """(shared, added, removed, moved), each change list ordered by the id that names it."""
    added = sorted((i, t) for t, i in tb.items() if t not in ta)
    removed = sorted((i, t) for t, i in ta.items() if t not in tb)
    moved = sorted((i, t) for t, i in ta.items() if t in tb and tb[t] != i)
    return (len(ta.keys() & tb.keys()),
            Changes(len(added), tuple(TokenChange(t, None, i) for i, t in added[:show])),
            Changes(len(removed), tuple(TokenChange(t, i, None) for i, t in removed[:show])),
            Changes(len(moved), tuple(TokenChange(t, i, tb[t]) for i, t in moved[:show])))


def compare_specials(a, b) -> tuple[TokenChange, ...]:
    sa, sb = a.special_ids, b.special_ids
    return tuple(TokenChange(s.encode("utf-8", "surrogatepass"), sa.get(s), sb.get(s))
                 for s in sorted(sa.keys() | sb.keys(), key=lambda s: (sa.get(s, sb.get(s)), s))
                 if sa.get(s) != sb.get(s))


def merge_ranks(model) -> dict[tuple[bytes, bytes], int]:
    """(left bytes, right bytes) -> rank of every merge."""
    tokens = [t.encode("utf-8") if isinstance(t, str) else t for t in model.ranked_tokens]
    return {(tokens[x], tokens[y]): r for r, (x, y) in enumerate(model.merges)}


def compare_merges(ma: dict, mb: dict, show: int = SHOW) -> tuple[int, Changes, Changes, Changes]:
    """(shared, added, removed, re-ranked), by rank (A's for re-ranked)."""
    added = sorted((r, p) for p, r in mb.items() if p not in ma)
    removed = sorted((r, p) for p, r in ma.items() if p not in mb)
    reranked = sorted((r, p) for p, r in ma.items() if p in mb and mb[p] != r)
    return (len(ma.keys() & mb.keys()),
            Changes(len(added), tuple(MergeChange(*p, None, r) for r, p in added[:show])),
            Changes(len(removed), tuple(MergeChange(*p, r, None) for r, p in removed[:show])),
            Changes(len(reranked), tuple(MergeChange(*p, r, mb[p]) for r, p in reranked[:show])))


def compare_scores(a, b, show: int = SHOW) -> Changes:
    """Pieces (by their text) both score, whose scores differ, in A's id order: a Unigram
    model's segmentation follows its scores, so they count as much as merges' ranks."""
    sb = {piece: score for piece, score in b.pieces}
    changed = [(piece, score, sb[piece]) for piece, score in a.pieces if piece in sb and sb[piece] != score]
    return Changes(len(changed), tuple(ScoreChange(*c) for c in changed[:show]))


def pipeline_of(model, describe: Callable[[object], list[str]] = lambda m: []) -> dict[str, str]:
    """What a model says of how it turns text into chunks, field by field."""
    pre = model.pre_tokenizer
    out = {"kind": model.kind, "units": Units.named(model.units).value,
           "normalizer": model.normalizer_label if isinstance(model, OwnDisplay) else str(model.normalizer),
           "pre-tokenizer": pre.name if pre.pattern is None else f"{pre.name} {pre.pattern}"}
    for k, line in enumerate(describe(model), 1):
        out[f"{model.kind} {k}"] = line
    return out


def compare_pipelines(pa: dict[str, str], pb: dict[str, str]) -> tuple[tuple[str, str, str], ...]:
    return tuple((k, pa.get(k, "(none)"), pb.get(k, "(none)")) for k in dict.fromkeys([*pa, *pb])
                 if pa.get(k) != pb.get(k))


def first_parting(a, b, texts: Iterable[Text]) -> tuple[int, Parting | None]:
    """How many texts encode alike before the first that does not, and that one."""
    alike = 0
    for number, t in enumerate(texts, 1):
        try:
            ids_a = encode_content(a, t.text)
        except TokWorkbenchError as exc:
            return alike, _unencodable(t, number, f"A: {exc}")
        try:
            ids_b = encode_content(b, t.text)
        except TokWorkbenchError as exc:
            return alike, _unencodable(t, number, f"B: {exc}")
        if ids_a != ids_b:
            return alike, parting_at(t, number, ids_a, ids_b, a, b)
        alike += 1
    return alike, None


def _where(t: Text) -> str:
    return t.name if t.line is None else f"{t.name} line {t.line}"


def _unencodable(t: Text, number: int, error: str) -> Parting:
    return Parting(_where(t), number, 0, None, "", 0, (), (), 0, 0, error)


def parting_at(t: Text, number: int, ids_a: list[int], ids_b: list[int], a, b) -> Parting:
    k = first_index(ids_a, ids_b)
    shown, offset = char_offset(b, t.text, ids_b, k)
    lo = max(0, offset - CONTEXT)
    window = range(max(0, k - AROUND), k + AROUND + 1)

    def run(ids, model):
        return tuple((p, ids[p], model.token_text(ids[p])) for p in window if p < len(ids))

    return Parting(_where(t), number, k, offset, shown[lo:offset + CONTEXT], offset - lo, run(ids_a, a),
                   run(ids_b, b), len(ids_a), len(ids_b))


def diff_models(a, b, names: tuple[str, str] = ("A", "B"), texts: Iterable[Text] = (),
                describe: Callable[[object], list[str]] = lambda m: [], show: int = SHOW) -> ModelDiff:
    """The whole report (see the module docstring)."""
    table_a, table_b = id_table(a), id_table(b)
    shared, added, removed, moved = compare_tokens(ordinary_tokens(a, table_a), ordinary_tokens(b, table_b), show)
    merge_fields: dict = {"merges": None}
    if isinstance(a, MergeRanked) and isinstance(b, MergeRanked):
        m_shared, m_added, m_removed, reranked = compare_merges(merge_ranks(a), merge_ranks(b), show)
        merge_fields = {"merges": (len(a.merges), len(b.merges)), "merges_shared": m_shared,
                        "merges_added": m_added, "merges_removed": m_removed, "reranked": reranked}
    if isinstance(a, Scored) and isinstance(b, Scored):
        merge_fields |= {"scored": True, "rescored": compare_scores(a, b, show)}
    alike, parting = first_parting(a, b, texts)
    return ModelDiff(names, (a.kind, b.kind), (a.vocab_size, b.vocab_size), (fingerprint(a, table_a), fingerprint(b, table_b)),
                     shared, added, removed, moved, compare_specials(a, b), **merge_fields,
                     pipeline=compare_pipelines(pipeline_of(a, describe), pipeline_of(b, describe)),
                     texts=alike, parting=parting)


# -- writers --------------------------------------------------------------------------------
def _id(i: int | None) -> str:
    return "(none)" if i is None else str(i)


def _token(t: bytes) -> str:
    return quote(render_bytes(t))


def _merge(m: MergeChange) -> str:
    return f"{_token(m.left)} + {_token(m.right)}"


def _run(items: Sequence[tuple[int, int, str]]) -> str:
    return "  ".join(f"[{k}] {i} {quote(token)}" for k, i, token in items) or "(no ids)"


def _examples(label: str, changes: Changes, show: Callable) -> list[str]:
    out = [f"  {label:<10} {show(c)}" for c in changes.first]
    if changes.count > len(changes.first):
        rest = changes.count - len(changes.first)
        out.append(f"  {'':<10} … and {rest:,} more" if changes.first else f"  {label:<10} {rest:,}")  # --show 0
    return out


def parting_lines(p: Parting, names: tuple[str, str] = ("A", "B")) -> list[str]:
    head = f"first parting: {p.where} (text {p.text_number:,})"
    if p.error is not None:
        return [f"{head}: only one encodes it ({p.error})"]
    return [f"{head}: at character {p.offset:,}, id {p.index:,} ({names[0]} {p.count_a:,} ids, "
            + f"{names[1]} {p.count_b:,})",
            "  text       " + quote(p.context[:p.context_at]) + " | " + quote(p.context[p.context_at:]),
            f"  {names[0]:<10} {_run(p.run_a)}", f"  {names[1]:<10} {_run(p.run_b)}"]


def diff_lines(d: ModelDiff) -> list[str]:
    """The report as `tokworkbench diff` prints it."""
    width = max(map(len, d.names))
    out = [f"{'AB'[k]} {d.names[k]:<{width}}  {d.kinds[k]}  vocabulary {d.sizes[k]:,}  "
           f"fingerprint {d.fingerprints[k][:16]}…" for k in (0, 1)]
    out.append(f"tokens: {d.shared:,} shared, {d.added.count:,} added, {d.removed.count:,} removed, "
               f"{d.moved.count:,} under another id")
    out += _examples("added", d.added, lambda c: f"id {c.id_b} {_token(c.token)}")
    out += _examples("removed", d.removed, lambda c: f"id {c.id_a} {_token(c.token)}")
    out += _examples("moved", d.moved, lambda c: f"{_token(c.token)} id {c.id_a} -> {c.id_b}")
    if d.merges is not None:
        out.append(f"merges: A {d.merges[0]:,}, B {d.merges[1]:,}; {d.merges_shared:,} shared, "
                   f"{d.reranked.count:,} re-ranked, {d.merges_added.count:,} added, {d.merges_removed.count:,} removed")
        out += _examples("re-ranked", d.reranked, lambda m: f"{_merge(m)} rank {m.rank_a} -> {m.rank_b}")
        out += _examples("added", d.merges_added, lambda m: f"{_merge(m)} rank {m.rank_b}")
        out += _examples("removed", d.merges_removed, lambda m: f"{_merge(m)} rank {m.rank_a}")
    if d.scored:
        out.append(f"scores: {d.rescored.count:,} of the pieces both have scored otherwise")
        out += _examples("rescored", d.rescored, lambda c: f"{quote(c.piece)} {c.score_a:.6g} -> {c.score_b:.6g}")
    if d.specials:
        out.append("special tokens that differ:")
        out += [f"  {_token(s.token)} id {_id(s.id_a)} -> {_id(s.id_b)}" for s in d.specials]
    if d.pipeline:
        out.append("pipeline differences:")
        for what, a, b in d.pipeline:
            out += [f"  {what}", f"    A {quote(a)}", f"    B {quote(b)}"]
    if d.parting is not None:
        out += parting_lines(d.parting)
    elif d.texts:
        out.append(f"texts: {d.texts:,}, the same ids from both")
    out.append("identical: the same tokens, ids, merges and pipeline" if d.identical else "DIFFERENT")
    return out


def _token_json(c: TokenChange) -> dict:
    return {"token": render_bytes(c.token), "hex": c.token.hex(), "id_a": c.id_a, "id_b": c.id_b}


def _merge_json(m: MergeChange) -> dict:
    return {"left": render_bytes(m.left), "right": render_bytes(m.right), "rank_a": m.rank_a, "rank_b": m.rank_b}


def _changes_json(c: Changes, one: Callable) -> dict:
    return {"count": c.count, "first": [one(x) for x in c.first]}


def diff_json(d: ModelDiff) -> dict:
    """The report as a JSON document (`--format json`)."""
    out = {"identical": d.identical,
           "models": [{"name": d.names[k], "kind": d.kinds[k], "vocab_size": d.sizes[k],
                       "fingerprint": d.fingerprints[k]} for k in (0, 1)],
           "tokens": {"shared": d.shared, "added": _changes_json(d.added, _token_json),
                      "removed": _changes_json(d.removed, _token_json), "moved": _changes_json(d.moved, _token_json)},
           "special_tokens": [_token_json(s) for s in d.specials],
           "pipeline": [{"what": w, "a": a, "b": b} for w, a, b in d.pipeline],
           "merges": None, "texts_alike": d.texts, "first_parting": None,
           "rescored": _changes_json(d.rescored, lambda c: {"piece": c.piece, "score_a": c.score_a,
                                                          "score_b": c.score_b}) if d.scored else None}
    if d.merges is not None:
        out["merges"] = {"a": d.merges[0], "b": d.merges[1], "shared": d.merges_shared,
                         "reranked": _changes_json(d.reranked, _merge_json),
                         "added": _changes_json(d.merges_added, _merge_json),
                         "removed": _changes_json(d.merges_removed, _merge_json)}
    if d.parting is not None:
        p = d.parting
        out["first_parting"] = {"text": p.where, "text_number": p.text_number, "id_index": p.index,
                                "offset": p.offset, "error": p.error, "count_a": p.count_a, "count_b": p.count_b,
                                "ids_a": [[k, i, t] for k, i, t in p.run_a], "ids_b": [[k, i, t] for k, i, t in p.run_b]}
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def diff_markdown(d: ModelDiff) -> list[str]:
    """The report as Markdown: a summary table, then the text report's details in a code block."""
    rows = [("vocabulary", f"{d.sizes[0]:,}", f"{d.sizes[1]:,}"), ("kind", d.kinds[0], d.kinds[1]),
            ("fingerprint", d.fingerprints[0][:16] + "…", d.fingerprints[1][:16] + "…")]
    if d.merges is not None:
        rows.append(("merges", f"{d.merges[0]:,}", f"{d.merges[1]:,}"))
    out = [f"## {_cell(d.names[0])} vs {_cell(d.names[1])}: " + ("identical" if d.identical else "different"), "",
           f"| | A: {_cell(d.names[0])} | B: {_cell(d.names[1])} |", "|---|---|---|",
           *(f"| {w} | {_cell(a)} | {_cell(b)} |" for w, a, b in rows), "",
           f"- tokens shared: {d.shared:,}", f"- tokens added: {d.added.count:,}",
           f"- tokens removed: {d.removed.count:,}", f"- tokens under another id: {d.moved.count:,}"]
    if d.merges is not None:
        out.append(f"- merges re-ranked: {d.reranked.count:,}")
    if d.scored:
        out.append(f"- pieces scored otherwise: {d.rescored.count:,}")
    out += [f"- special tokens that differ: {len(d.specials):,}", f"- pipeline differences: {len(d.pipeline):,}"]
    if d.parting is not None:
        out.append(f"- first parting text: {_cell(d.parting.where)}"
                   + (f", character {d.parting.offset:,}" if d.parting.offset is not None else ""))
    out += ["", "```", *(line.replace("```", "'''") for line in diff_lines(d)), "```"]
    return out


# -- CSV: one row per listed change, through the shared report writers --------------------------
CSV_COLUMNS = (Column("change"), Column("count"), Column("token"), Column("hex"),
               Column("id_a"), Column("id_b"), Column("rank_a"), Column("rank_b"), Column("a"), Column("b"))


def diff_rows(d: ModelDiff) -> list[dict]:
    """Each change the report lists (the first `--show` of each), with the count of its kind:
    what a spreadsheet or a script filters."""
    rows: list[dict] = []

    def tokens(change: str, c: Changes) -> None:
        rows.extend({"change": change, "count": c.count, "token": render_bytes(t.token), "hex": t.token.hex(),
                     "id_a": t.id_a, "id_b": t.id_b} for t in c.first)

    def merges(change: str, c: Changes) -> None:
        rows.extend({"change": change, "count": c.count, "token": render_bytes(m.left) + " + " + render_bytes(m.right),
                     "hex": (m.left + m.right).hex(), "rank_a": m.rank_a, "rank_b": m.rank_b} for m in c.first)

    tokens("added", d.added)
    tokens("removed", d.removed)
    tokens("moved", d.moved)
    rows.extend({"change": "special", "count": len(d.specials), "token": render_bytes(s.token), "hex": s.token.hex(),
                 "id_a": s.id_a, "id_b": s.id_b} for s in d.specials)
    if d.merges is not None:
        merges("merge re-ranked", d.reranked)
        merges("merge added", d.merges_added)
        merges("merge removed", d.merges_removed)
    if d.scored:
        rows.extend({"change": "rescored", "count": d.rescored.count, "token": c.piece, "a": c.score_a,
                     "b": c.score_b} for c in d.rescored.first)
    rows.extend({"change": "pipeline", "count": len(d.pipeline), "token": what, "a": a, "b": b}
                for what, a, b in d.pipeline)
    if d.parting is not None:
        rows.append({"change": "first parting", "count": 1, "token": d.parting.where, "a": d.parting.count_a,
                     "b": d.parting.count_b, "id_a": d.parting.index})
    return rows


def diff_csv(d: ModelDiff) -> str:
    return to_csv(diff_rows(d), CSV_COLUMNS)
