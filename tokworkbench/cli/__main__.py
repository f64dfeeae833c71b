from tokworkbench.cli import entry

entry()
