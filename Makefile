# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test bench clean

$(STAMP): requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

## Start PostgreSQL, Redis, the web server, a Celery worker and beat; Ctrl-C stops them all.
run: $(STAMP)
	$(BIN)/python -m cognizes.run

## Run the whole test suite against real PostgreSQL and Redis.
test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## Benchmarks that print ratios against ADK's own services.
bench: $(STAMP)
	$(BIN)/python bench/sessions.py
	$(BIN)/python bench/live.py

clean:
	rm -rf $(VENV)
