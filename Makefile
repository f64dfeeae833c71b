# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test corpus bench clean

# Our modules' bytecode, as pip writes it for an installed package: an editable install has none,
# and where PYTHONDONTWRITEBYTECODE is set (this project's CI machines) Python never writes it,
# so every start compiled ~150 modules again (0.8 s of a 1.2 s `import tokworkbench.cli`).
# Up to date, it only compares timestamps.
BYTECODE = $(BIN)/python -m compileall -q tokworkbench

# The first `make run` builds the venv (a minute or two): each step says what it does, and the
# main install shows pip's own progress (what it collects and downloads) instead of a silent terminal.
$(STAMP): pyproject.toml
	@echo "make: creating $(VENV) with $(PYTHON) (first run only; about two minutes in all)"
	$(PYTHON) -m venv $(VENV)
	@echo "make: upgrading pip"
	$(BIN)/pip install --quiet --upgrade pip
	@echo "make: installing tokworkbench with its test extras (textual, numpy, regex, tokenizers, tiktoken, ...)"
	$(BIN)/pip install -e '.[test]'
	$(BYTECODE)
	touch $(STAMP)
	@echo "make: $(VENV) is ready"

run: $(STAMP)
	@echo "make: opening the workbench$(if $(ARGS), on $(ARGS), on the embedded sample texts)"
	@$(BYTECODE)
	$(BIN)/tokworkbench $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The benchmarks' corpora: a folder holding en-100M.txt, en-10M.txt, multi-10M.txt and
# mixed-10M.txt. The default folder is built on first use by benchmarks/make_corpus.py from pinned
# Debian packages (apt-get download, about 180 MB; standard library only); `make bench CORPUS=DIR`
# takes a folder of your own with those four files instead, and builds nothing.
DEFAULT_CORPUS := bench-data/corpus
CORPUS ?= $(DEFAULT_CORPUS)
CORPUS_FILES := en-100M.txt en-10M.txt multi-10M.txt mixed-10M.txt

corpus:
ifeq ($(CORPUS),$(DEFAULT_CORPUS))
	$(PYTHON) benchmarks/make_corpus.py $(CORPUS)
endif
	@for f in $(CORPUS_FILES); do test -f "$(CORPUS)/$$f" || \
	  { echo "make: $(CORPUS)/$$f is missing: CORPUS must name a folder with $(CORPUS_FILES)" >&2; exit 1; }; done

# The whole table in benchmarks/README.md (about 25 minutes on 2 cores: three interleaved rounds of each trainer).
bench: $(STAMP) corpus
	$(BIN)/pip install --quiet -e '.[test,bench]'
	$(BYTECODE)
	$(BIN)/python benchmarks/train_compare.py $(CORPUS)/en-10M.txt --vocab-size 8192 --check-merges --phases
	$(BIN)/python benchmarks/train_compare.py $(CORPUS)/multi-10M.txt --vocab-size 32768 --check-merges --phases
	$(BIN)/python benchmarks/train_compare.py $(CORPUS)/en-100M.txt --vocab-size 32768 --phases
	$(BIN)/python benchmarks/encode_vs_tiktoken.py $(CORPUS)/en-10M.txt
	$(BIN)/python benchmarks/app_latency.py $(CORPUS)/mixed-10M.txt
	$(BIN)/python benchmarks/startup.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
