"""The app names a model kind in one place: app/kind_views.py, its presentation table. Every other
module asks that table or the core's `Kind` record, so a new kind is a row, not a search."""

import re
from pathlib import Path

import tokworkbench

APP = Path(tokworkbench.__file__).parent / "app"
COMPARED = re.compile(r"""[=!]=\s*['"](bpe|unigram|fixed)['"]|['"](bpe|unigram|fixed)['"]\s*[=!]=|"""
                      r"""frozenset\(\{\s*['"]|\bin\s*[({\[]\s*['"](bpe|unigram|fixed)['"]""")


def test_no_app_module_but_the_kind_table_compares_a_kind_name():
    offences = [f"{path.relative_to(APP)}:{n}: {line.strip()}"
                for path in APP.rglob("*.py") if path.name != "kind_views.py"
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if COMPARED.search(line)]
    assert offences == []


def test_the_table_has_a_row_for_every_kind_of_the_core():
    from tokworkbench.app.kind_views import VIEWS
    from tokworkbench.core.registry.kinds import KINDS

    assert set(VIEWS) == set(KINDS)
