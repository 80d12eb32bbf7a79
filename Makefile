# One venv, made by this file; every target depends on it being current.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

FILE ?= definitions/evade_or_flock.json

.PHONY: demo run test lint typecheck pytest bench schema reference clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[crowds,traces,studies,dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/behaviortk demo

run: $(STAMP)
	$(BIN)/behaviortk run $(FILE)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	ARCADE_HEADLESS=1 $(BIN)/python -m pytest

test: lint typecheck pytest

bench: $(STAMP)
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

schema: $(STAMP)
	$(BIN)/behaviortk schema --out definitions/behaviortk.schema.json

reference: $(STAMP)
	$(BIN)/python -m behaviortk.format.reference > docs/nodes.md

clean:
	rm -rf $(VENV)
