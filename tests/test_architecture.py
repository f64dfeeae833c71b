"""The core stays free of UI imports: the app and CLI are views over it."""

import subprocess
import sys


def test_core_imports_no_textual_or_rich():
    code = (
        "import sys, tokworkbench.core, tokworkbench.core.formats.modelfile, tokworkbench.cli;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'));"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
