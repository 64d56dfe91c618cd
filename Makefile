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

# bubblewrap, which confines sandboxes' code: the system's if installed, else Debian's pinned build unpacked into
# var/tools (no root needed; tools_app/sandbox_bwrap.py checks its sha256).
SANDBOX_TOOL := var/tools/.checked
$(SANDBOX_TOOL): tools_app/sandbox_bwrap.py $(STAMP)
	$(BIN)/python -m tools_app.sandbox_bwrap
	mkdir -p $(dir $(SANDBOX_TOOL)) && touch $(SANDBOX_TOOL)

## Start PostgreSQL, Redis, the web server, a Celery worker and beat; Ctrl-C stops them all.
run: $(STAMP) $(SANDBOX_TOOL)
	$(BIN)/cognizes run

# Test processes (pytest-xdist): each has its own test database and Redis database, and is given whole files, so
# that a file's servers start once. Two keep two cores busy; `make test TEST_WORKERS=0` runs in this process.
TEST_WORKERS ?= 2
TEST := $(BIN)/python -m pytest --numprocesses $(TEST_WORKERS) --dist loadfile

## Run the whole test suite against real PostgreSQL and Redis.
test: $(STAMP) $(SANDBOX_TOOL)
	$(TEST) $(PYTEST_ARGS)

## The inner loop: the domain and API tests on the shared database, without browsers, servers of their own, other
## languages' clients or passes over the whole code base (the markers in pytest.ini).
test-fast: $(STAMP)
	$(TEST) -m "not (browser or servers or clients or sweeps)" $(PYTEST_ARGS)

## Benchmarks that print ratios against ADK's own services.
bench: $(STAMP)
	$(BIN)/python bench/sessions.py
	$(BIN)/python bench/live.py

clean:
	rm -rf $(VENV)
