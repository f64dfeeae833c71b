"""`tokworkbench health MODEL [PATH...]`: the vocabulary's health (core/inspection/health.py) as a
table, CSV, JSON or Markdown: how many tokens each flag marks, and which.

The rows are built once (`flag_rows`, `summary_rows`) and each format only writes them, so the
shared writers of core/inspection/reports.py can take over the writing when they land.
"""

import argparse
import csv
import io
import json

from tokworkbench.cli.options import MODEL_FLAGS, count, emit, emit_json, expand_globs, load, model_options
from tokworkbench.core.inspection.escape import hex_bytes, visible
from tokworkbench.core.inspection.health import FLAGS as HEALTH_FLAGS
from tokworkbench.core.inspection.health import HealthReport, duplicate_summary, health, magikarp_form
from tokworkbench.core.text.corpus import iter_documents

FLAGS = MODEL_FLAGS  # the flags the error hints may name (options.HINTS)
FORMATS = ("table", "csv", "json", "markdown")
COLUMNS = ("flag", "id", "token", "bytes", "detail")
MEANING = {
    "roundtrip": "decoded alone and encoded again, not the same id (Magikarp's check)",
    "unreachable": "no text can produce it: the joins do not make it of its own units",
    "partial": "bytes that are not UTF-8: starts or ends inside a character",
    "unseen": "the corpus never produces it",
    "special": "a special token whose text is ordinary text too (a token, or in the corpus)",
    "near-duplicate": "groups of tokens that differ only in case or leading spaces",
}


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("health", help="vocabulary health: tokens that do not come back, cannot be reached, "
                       "are partial UTF-8, never seen, special text clashes, near-duplicates",
                       description="Check a model's vocabulary: tokens whose text does not encode back to them "
                       "(Magikarp's check), tokens no text can produce, tokens that start or end inside a UTF-8 "
                       "character, special tokens whose text is ordinary text too, groups of tokens that differ "
                       "only in case or leading spaces, and with PATHs the tokens the corpus never produces.")
    p.add_argument("model", metavar="MODEL", help="a model file or a preset (cl100k_base, o200k_base, gpt2)")
    p.add_argument("paths", nargs="*", metavar="PATH", help="corpus files or folders (for unseen tokens)")
    p.add_argument("--format", choices=FORMATS, default="table")
    p.add_argument("--show", type=count, default=10, metavar="N",
                   help="table and markdown: tokens listed per flag (default: 10; 0 lists none; csv and json "
                   "list all)")
    model_options(p)
    return p


def run(args) -> int:
    model = load(args, args.model)
    documents = None
    if args.paths:
        documents = [doc.text for doc in iter_documents(expand_globs(args.paths))]
    report = health(model, documents)
    write = {"table": table, "csv": csv_text, "json": json_text, "markdown": markdown}[args.format]
    text = write(report, args.model, args.show, model.token_bytes)
    (emit_json if args.format == "json" else emit)(text)
    return 0


# -- rows -------------------------------------------------------------------------------------
def summary_rows(report: HealthReport) -> list[tuple[str, str, str]]:
    """(flag, count, what it means and how the count splits) per flag."""
    counts = report.counts()
    rows = []
    for flag in HEALTH_FLAGS:
        n = counts[flag]
        what = MEANING[flag]
        if flag == "unreachable" and n is None:
            what = "not checked: this kind of model cannot say which tokens its joins make"
        elif flag == "unseen" and n is None:
            what = "not checked: no corpus given"
        elif flag == "unseen":
            what += f" ({report.corpus_tokens:,} corpus tokens)"
        elif flag == "partial":
            starts = sum(p.starts_inside for p in report.partial)
            ends = sum(p.ends_inside for p in report.partial)
            other = sum(not (p.starts_inside or p.ends_inside) for p in report.partial)
            what += f" (starts inside {starts:,}, ends inside {ends:,}, neither {other:,})"
        elif flag == "special":
            what += f" (of {len(report.specials):,} special)"
        elif flag == "near-duplicate":
            split = duplicate_summary(report.near_duplicates)
            tokens = sum(len(g.ids) for g in report.near_duplicates)
            what += (f": {tokens:,} tokens (case {split['case']:,}, leading space {split['space']:,}, "
                     f"both {split['both']:,})")
        rows.append((flag, "–" if n is None else f"{n:,}", what))
    return rows


def flag_rows(report: HealthReport, token_of) -> list[tuple[str, int, str, str, str]]:
    """Every flagged token as (flag, id, token, bytes, detail); `token_of(id)` gives the bytes."""
    rows: list[tuple[str, int, str, str, str]] = []
    for r in report.roundtrip:
        rows.append(("roundtrip", r.id, r.magikarp, hex_bytes(token_of(r.id)), "encodes to " + " ".join(map(str, r.ids))))
    for tid in report.unreachable:
        rows.append(("unreachable", tid, _text(token_of(tid)), hex_bytes(token_of(tid)), ""))
    for p in report.partial:
        where = " and ".join(w for w, on in (("starts inside", p.starts_inside), ("ends inside", p.ends_inside)) if on)
        rows.append(("partial", p.id, _text(p.data), hex_bytes(p.data), where or "not UTF-8"))
    for tid in report.unseen or ():
        rows.append(("unseen", tid, _text(token_of(tid)), hex_bytes(token_of(tid)), ""))
    for s in report.specials:
        if s.flagged:
            why = [f"same text as token {s.same_as}"] if s.same_as is not None else []
            why += ["its text encodes to it"] if s.ordinary_ids == (s.id,) else []
            why += [f"{s.corpus_hits:,} times in the corpus"] if s.corpus_hits else []
            rows.append(("special", s.id, visible(s.text), hex_bytes(s.text.encode("utf-8")), "; ".join(why)))
    for g in report.near_duplicates:
        for tid in g.ids:
            rows.append(("near-duplicate", tid, _text(token_of(tid)), hex_bytes(token_of(tid)),
                         f"group {visible(g.key)}: " + " ".join(map(str, g.ids))))
    return rows


def _text(data: bytes) -> str:
    return visible(data.decode("utf-8", errors="backslashreplace"))


# -- formats ----------------------------------------------------------------------------------
def _by_flag(rows, show: int) -> dict[str, list]:
    out: dict[str, list] = {}
    for row in rows:
        listed = out.setdefault(row[0], [])
        if len(listed) < show:
            listed.append(row)
    return out


def table(report: HealthReport, name: str, show: int, token_of=None) -> str:
    lines = [f"health of {name}: {report.ordinary:,} ordinary tokens, {len(report.specials):,} special"]
    summary = summary_rows(report)
    width = max(len(c) for _, c, _ in summary)
    lines += [f"  {flag:<15}{count:>{width}}  {what}" for flag, count, what in summary]
    if show > 0 and token_of is not None:
        for flag, rows in _by_flag(flag_rows(report, token_of), show).items():
            lines.append(f"{flag} (first {len(rows)})")
            lines += [f"  {tid:>7}  {token}  {detail}".rstrip() for _, tid, token, _, detail in rows]
    return "\n".join(lines)


def csv_text(report: HealthReport, name: str, show: int, token_of=None) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(flag_rows(report, token_of))
    return out.getvalue().rstrip("\n")


def json_text(report: HealthReport, name: str, show: int, token_of=None) -> str:
    doc = {
        "model": name,
        "ordinary": report.ordinary,
        "counts": report.counts(),
        "corpus_tokens": report.corpus_tokens if report.unseen is not None else None,
        "roundtrip": [{"id": r.id, "text": r.text, "magikarp": magikarp_form(r.text), "ids": list(r.ids)}
                      for r in report.roundtrip],
        "unreachable": list(report.unreachable) if report.unreachable_checked else None,
        "partial": [{"id": p.id, "bytes": p.data.hex(), "starts_inside": p.starts_inside, "ends_inside": p.ends_inside}
                    for p in report.partial],
        "unseen": None if report.unseen is None else list(report.unseen),
        "specials": [{"id": s.id, "text": s.text, "ordinary_ids": list(s.ordinary_ids), "same_as": s.same_as,
                      "corpus_hits": s.corpus_hits, "flagged": s.flagged} for s in report.specials],
        "near_duplicates": [{"key": g.key, "ids": list(g.ids), "case": g.case, "space": g.space}
                            for g in report.near_duplicates],
    }
    return json.dumps(doc, ensure_ascii=False)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown(report: HealthReport, name: str, show: int, token_of=None) -> str:
    lines = [f"# Vocabulary health of {_cell(name)}", "",
             f"{report.ordinary:,} ordinary tokens, {len(report.specials):,} special.", "",
             "| flag | tokens | what |", "|---|---:|---|"]
    lines += [f"| {flag} | {count} | {_cell(what)} |" for flag, count, what in summary_rows(report)]
    if show > 0 and token_of is not None:
        for flag, rows in _by_flag(flag_rows(report, token_of), show).items():
            lines += ["", f"## {flag} (first {len(rows)})", "", "| id | token | bytes | detail |", "|---:|---|---|---|"]
            lines += [f"| {tid} | `{_cell(token)}` | {b} | {_cell(detail)} |" for _, tid, token, b, detail in rows]
    return "\n".join(lines)
