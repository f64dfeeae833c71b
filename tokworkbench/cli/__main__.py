import sys

from tokworkbench.cli import main

sys.exit(main())
