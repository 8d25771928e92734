# Two entry points for a newcomer on a fresh machine (Python 3.11+):
#   make demo   install into .venv, then `kenomem tour` a demo vault (./demo-vault)
#   make test   install into .venv with the test tools, then lint and run the tests
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

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
	$(BIN)/pytest -q

bench: $(VENV)/.installed
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) demo-vault build dist *.egg-info
