# Two entry points for a newcomer on a fresh machine (Python 3.11+):
#   make demo   install into .venv, then remember and recall on a demo vault
#   make test   install into .venv with the test tools, then lint and run the tests
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/kenomem: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

demo: $(BIN)/kenomem
	KENOMEM=$(BIN)/kenomem sh scripts/demo.sh

lint: $(BIN)/kenomem
	$(BIN)/ruff check kenomem tests bench scripts
	$(BIN)/ruff format --check kenomem tests bench scripts
	$(BIN)/mypy kenomem

test: lint
	$(BIN)/pytest -q

bench: $(BIN)/kenomem
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) demo-vault build dist *.egg-info
