# uptime: `make run` starts the daemon, `make test` runs the suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP_FLAGS := --disable-pip-version-check -q

.PHONY: run test lint format bench bench-api bench-checks bench-scale bench-stats bench-jsonpath bench-pings bench-status bench-agents clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install $(PIP_FLAGS) --upgrade pip

$(VENV)/.installed-run: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(PIP_FLAGS) -e .
	touch $@

# The PostgreSQL driver is the extra uptime[postgres]: the suite and the
# benchmarks use PostgreSQL, `make run` on SQLite does not need it.
$(VENV)/.installed-postgres: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(PIP_FLAGS) -e '.[postgres]'
	touch $@ $(VENV)/.installed-run

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install $(PIP_FLAGS) -e '.[dev,postgres]'
	touch $@ $(VENV)/.installed-run $(VENV)/.installed-postgres

# The address the daemon listens on, as UPTIME_HOST and UPTIME_PORT say
# (from the environment or `make run UPTIME_PORT=9000`); IPv6 in brackets.
RUN_HOST = $(or $(UPTIME_HOST),127.0.0.1)
ADDRESS = http://$(if $(findstring :,$(RUN_HOST)),[$(RUN_HOST)],$(RUN_HOST)):$(or $(UPTIME_PORT),8080)

run: $(VENV)/.installed-run
	@echo "uptime: starting the daemon on $(ADDRESS)" >&2
	@echo "uptime: sign in from another terminal with:" >&2
	@echo "    $(BIN)/uptime login --local --email you@example.com" >&2
	@echo "    (or: TOKEN=\$$($(BIN)/uptime server session --email you@example.com);" >&2
	@echo "     curl -H \"Cookie: session_cookie=\$$TOKEN\" $(ADDRESS)/api/v1/monitors)" >&2
	exec $(BIN)/uptime server run

test: $(VENV)/.installed-dev
	$(BIN)/ruff check uptime_server uptime_cli tests bench
	$(BIN)/pytest -n 2 -q

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check uptime_server uptime_cli tests bench
	$(BIN)/ruff format --check uptime_server uptime_cli tests bench

format: $(VENV)/.installed-dev
	$(BIN)/ruff format uptime_server uptime_cli tests bench
	$(BIN)/ruff check --fix uptime_server uptime_cli tests bench

# Requests/s with 32 clients (wrk) against `uptime server run` on SQLite with
# 300 monitors; then latency of the monitor list and detail with 10,000
# monitors (SQLite, and PostgreSQL on 127.0.0.1:5432 when reachable).
bench-api: $(VENV)/.installed-postgres
	$(BIN)/python -m bench.api_load
	$(BIN)/python -m bench.api_load --api-processes 2
	$(BIN)/python -m bench.bench_api

# Stats latency vs. history length, list page at 10,000 monitors, DB size
# (generates its databases in a temporary directory; a few minutes).
bench-stats: $(VENV)/.installed-dev
	$(BIN)/python bench/bench_stats.py

bench: bench-api bench-checks bench-scale bench-stats bench-jsonpath bench-pings bench-status bench-agents

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache

bench-checks: $(VENV)/.installed-dev
	$(BIN)/python -m bench.bench_checks

# Two engine processes on one PostgreSQL (127.0.0.1:5432, a scratch database)
# beside prometheus-blackbox-exporter's http_2xx prober, HTTP and HTTPS, and
# their ratio (a few minutes).
bench-scale: $(VENV)/.installed-postgres
	$(BIN)/python -m bench.bench_scale

# Dispatch lag of N ordinary monitors with and without one pathological
# JSONPath monitor (about a minute).
bench-jsonpath: $(VENV)/.installed-dev
	$(BIN)/python -m bench.bench_jsonpath

# Heartbeat pings through `uptime server run` on embedded SQLite: pings/s
# recorded, p99 at half that rate, and the engine's overdue sweep.
bench-pings: $(VENV)/.installed-dev
	$(BIN)/python -m bench.bench_pings

# Status page (cold render, cached req/s) and badge req/s, 100 monitors with
# 90 days of roll-ups, served by `uptime server run` (about 40 s).
bench-status: $(VENV)/.installed-dev
	$(BIN)/python -m bench.bench_status

# Probe agents: claims and result batches through the agent API of
# `uptime server run` on SQLite (checks/s and daemon CPU per check).
bench-agents: $(VENV)/.installed-dev
	$(BIN)/python -m bench.agent_results
