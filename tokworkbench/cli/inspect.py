"""`tokworkbench inspect MODEL`: a summary of any model this tool reads, in each kind's own
terms (merges, scored pieces, a token list); --history-csv writes a trained model's history."""

import argparse

from tokworkbench.cli.options import MODEL_FLAGS, emit, load, model_options
from tokworkbench.core.compat import fingerprint
from tokworkbench.core.errors import OutputError, TrainingError
from tokworkbench.core.files.atomic import check_output, write_atomic
from tokworkbench.core.files.historycsv import write_history_csv, write_rounds_csv
from tokworkbench.core.inspection.escape import quote
from tokworkbench.core.inspection.reports import line_chart_svg
from tokworkbench.core.registry.kinds import BPE, UNIGRAM, kind_of
from tokworkbench.core.registry.load import model_inputs

FLAGS = MODEL_FLAGS


def add_parser(sub) -> argparse.ArgumentParser:
    ins = sub.add_parser("inspect", help="summarize a model: ours, HF tokenizer.json, .tiktoken or minbpe .model")
    ins.add_argument("model")
    ins.add_argument("--history-csv", metavar="FILE", help="also write the training history as CSV")
    ins.add_argument("--curve-svg", metavar="FILE", help="also draw a trained BPE model's compression curve "
                     "(tokens over the corpus after each merge) as SVG")
    model_options(ins)
    return ins


def run(args) -> int:
    targets = [check_output(out, model_inputs(args.model)) for out in (args.history_csv, args.curve_svg) if out]
    if len(targets) == 2 and targets[0] == targets[1]:  # the SVG replaced the CSV, after "wrote" was said
        raise OutputError(f"--history-csv and --curve-svg both name {args.curve_svg}; give each its own file")
    tok = load(args, args.model)
    if args.curve_svg and kind_of(tok) is not BPE:
        raise TrainingError(f"--curve-svg draws a BPE model's merges; {args.model} is a {kind_of(tok).noun}")
    emit("\n".join(SUMMARIES.get(kind_of(tok), _other)(args, tok)))
    return 0


def _pre_tokenizer(tok) -> str:
    pre = tok.pre_tokenizer
    return f"pre-tokenizer {pre.name}" + (f"  {pre.pattern}" if pre.name == "custom" else "")


def _vocabulary(tok) -> str:
    whole = f" + {len(tok.whole_tokens)} whole-chunk only" if tok.whole_tokens else ""
    return (f"vocabulary   {tok.vocab_size} = {tok.base_size} base + {len(tok.merges)} merges{whole} + "
            f"{len(tok.special_tokens)} special")


def _specials(tok, unk_id: int | None = None) -> list[str]:
    return [f"  {i:>7}  {s}" + (f"  ({tok.roles.role_of(s)})" if tok.roles.role_of(s) else "")
            + ("  (unknown characters)" if i == unk_id and tok.roles.role_of(s) != "unk" else "")
            for s, i in tok.special_ids.items()]


def _no_history(args, tok) -> None:
    if not tok.history:
        raise TrainingError(f"{args.model} records no training history to write")


def _bpe(args, tok) -> list[str]:
    lines = [
        f"model        {args.model}",
        f"units        {tok.units}",
        f"normalizer   {tok.normalizer}",
        _pre_tokenizer(tok),
        f"tie-break    {tok.tie_break}",
        _vocabulary(tok),
    ]
    if tok.history and tok.history[-1].length > 0:
        last = tok.history[-1]
        first_len = tok.history[0].length + tok.history[0].replacements
        lines.append(f"training     {first_len:,} -> {last.length:,} tokens ({first_len / last.length:.3f}x)")
    show = 10
    if tok.merges:
        lines.append("first merges")
        lines += _merge_lines(tok, range(min(show, len(tok.merges))))
        if len(tok.merges) > show:
            lines.append("last merges")
            lines += _merge_lines(tok, range(max(show, len(tok.merges) - show), len(tok.merges)))
    if tok.special_tokens:
        lines.append("special tokens")
        lines += _specials(tok)
    lines.append(f"fingerprint  {fingerprint(tok)}")
    if args.history_csv:
        _no_history(args, tok)
        first = tok.history[0]
        written = write_history_csv(args.history_csv, tok.history, tok.token_bytes, first.length + first.replacements)
        lines.append(f"wrote {len(tok.history):,} steps to {written}")
    if args.curve_svg:
        _no_history(args, tok)
        first = tok.history[0]
        points = [(0.0, float(first.length + first.replacements))] + [(float(k), float(r.length))
                                                                        for k, r in enumerate(tok.history, 1)]
        svg = line_chart_svg(f"{args.model}: tokens over the corpus after each merge", points, "merges", "tokens")
        written = write_atomic(args.curve_svg, svg.encode("utf-8"))
        lines.append(f"wrote the compression curve ({len(tok.history):,} merges) to {written}")
    return lines


def _merge_lines(tok, ranks) -> list[str]:
    def show(internal: int) -> str:
        return quote(tok.rank_text(internal))  # as the app's tables write it: \xe6, not \\xe6

    out = []
    for r in ranks:
        a, b = tok.merges[r]
        z = tok.base_size + r
        count = f"  x{tok.history[r].count:,}" if r < len(tok.history) else ""
        out.append(f"  {r:>5}  {show(a)} + {show(b)} -> id {tok.to_outside([z])[0]} {show(z)}{count}")
    return out


def _unigram(args, tok) -> list[str]:
    lines = [
        f"model        {args.model}",
        f"kind         {tok.kind}" + (f" ({tok.algorithm})" if tok.algorithm else ""),
        "units        char",
        f"normalizer   {tok.normalizer_label}",
        _pre_tokenizer(tok),
        f"vocabulary   {tok.vocab_size} = {len(tok.specials)} special + {tok.base_size} single characters + "
        + (f"{len(tok.byte_pieces)} byte pieces + " if tok.byte_pieces else "")
        + f"{tok.vocab_size - len(tok.specials) - tok.base_size - len(tok.byte_pieces)} longer pieces"
        + (f" ({len(tok.user_defined)} user-defined)" if tok.user_defined else ""),
    ]
    if tok.byte_fallback:
        lines.append("byte fallback an unknown character is its UTF-8 bytes' pieces" +
                     ("; HF's: a byte piece also matches its own text (<0x41>)" if tok.hf_byte_fallback else ""))
    if tok.start_cost:
        lines.append(f"note         trained with the course's Viterbi, which starts each word at cost {tok.start_cost:g}")
    if tok.history:
        first, last = tok.history[0], tok.history[-1]
        lines.append(f"training     {len(tok.history) - 1} rounds, vocabulary {first.vocab_size} -> {last.vocab_size}, "
                     f"loss {first.loss:.6g} -> {last.loss:.6g}")
    user = set(tok.user_defined)
    ranked = sorted((i for i in tok.matched_ids() if i not in user), key=lambda i: -tok.pieces[i][1])
    lines.append("likeliest pieces")
    lines += [f"  {i:>7}  {quote(tok.pieces[i][0])}  {tok.pieces[i][1]:.4f}" for i in ranked[:10]]
    lines.append("special tokens")
    lines += _specials(tok, tok.unk_id)
    if user:
        lines.append("user-defined pieces (matched in text, SentencePiece's bonus cost)")
        lines += [f"  {i:>7}  {quote(tok.pieces[i][0])}" for i in sorted(user)]
    if args.history_csv:
        _no_history(args, tok)
        written = write_rounds_csv(args.history_csv, tok.history, 0)  # the corpus length is not in the model
        lines.append(f"wrote {len(tok.history):,} rounds to {written}")
    lines.append(f"fingerprint  {fingerprint(tok)}")
    return lines


def _other(args, tok) -> list[str]:
    """A kind without merges or scores (a fixed vocabulary): its tokens, specials and roles."""
    if args.history_csv:
        raise TrainingError(f"{args.model} is a {kind_of(tok).noun}; it has no training history to write")
    show = 20
    lines = [f"model        {args.model}", f"kind         {tok.kind}",
             *(f"             {line}" for line in kind_of(tok).describe(tok)),
             f"vocabulary   {tok.vocab_size} tokens, {len(tok.special_tokens)} special",
             "tokens       " + " ".join(f"{i}:{quote(tok.token_text(i))}" for i in range(min(show, tok.vocab_size)))
             + (" …" if tok.vocab_size > show else "")]
    if tok.special_tokens:
        lines.append("special tokens")
        lines += _specials(tok)
    lines.append(f"fingerprint  {fingerprint(tok)}")
    return lines


SUMMARIES = {BPE: _bpe, UNIGRAM: _unigram}  # this command's presentation of each kind; others: `_other`
