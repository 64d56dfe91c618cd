# The two commands a newcomer needs: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-fast bench clean

# Cognizes itself (editable: the checkout is the code that runs) with what the tests and benchmarks need.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e . --group dev
	touch $(STAMP)

## Start PostgreSQL, Redis, the web server, a Celery worker and beat; Ctrl-C stops them all.
run: $(STAMP)
	$(BIN)/cognizes run

## Run the whole test suite against real PostgreSQL and Redis.
test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

## The inner loop: the domain and API tests on the shared database, without browsers, servers of their own or other
## languages' clients (the markers in pytest.ini).
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not (browser or servers or clients)" $(PYTEST_ARGS)

## Benchmarks that print ratios against ADK's own services.
bench: $(STAMP)
	$(BIN)/python bench/sessions.py
	$(BIN)/python bench/live.py

clean:
	rm -rf $(VENV)
