# Two entry points for a newcomer on a fresh machine (Python 3.11+):
#   make demo   install into .venv, then `kenomem tour` a demo vault (./demo-vault)
#   make test   install into .venv with the test tools, then lint and run the tests
# and one for a longer look: `make fuzz` runs the property tests on new random examples.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Test processes: each takes whole test files (their tests keep their order and share
# their module's fixtures). WORKERS=0 runs the tests in this process.
WORKERS ?= 2

.PHONY: demo test fuzz lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $(VENV)/.installed $@

demo: $(VENV)/.installed
	KENOMEM=$(BIN)/kenomem sh scripts/demo.sh

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check kenomem tests bench scripts
	$(BIN)/ruff format --check kenomem tests bench scripts
	$(BIN)/mypy kenomem

test: lint
	$(BIN)/pytest -q -n $(WORKERS) --dist loadfile

# Every property test on ten times its examples, drawn at random (not the fixed draw of
# `make test`); a failure is kept in .hypothesis/ and tried first the next run.
fuzz: $(VENV)/.installed-dev
	$(BIN)/pytest -q -n $(WORKERS) --dist loadfile -m hypothesis --hypothesis-profile=fuzz

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) demo-vault build dist *.egg-info
