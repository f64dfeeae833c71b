# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/tokworkbench $(ARGS)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# The whole table in benchmarks/README.md (about 10 minutes); builds the corpora on first use.
CORPUS := bench-data/corpus
MAKE_CORPUS ?= ../shared/bench/make_corpus.sh
bench: $(STAMP)
	$(BIN)/pip install --quiet -e '.[test,bench]'
	test -f $(CORPUS)/en-100M.txt || bash $(MAKE_CORPUS) $(CORPUS)
	$(BIN)/python benchmarks/train_compare.py $(CORPUS)/en-100M.txt
	$(BIN)/python benchmarks/train_compare.py $(CORPUS)/multi-10M.txt --check-merges
	$(BIN)/python benchmarks/train_compare.py $(CORPUS)/en-10M.txt --check-merges
	$(BIN)/python benchmarks/encode_vs_tiktoken.py
	$(BIN)/python benchmarks/app_latency.py
	$(BIN)/python benchmarks/startup.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
