# fairportal: `make run` starts the demo, `make test` runs the lint and the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-requirements
TEST_STAMP := $(VENV)/.installed-test-requirements
SECRET_KEY_PATH := $(CURDIR)/var/secret_key
PORT ?= 8000
DB ?= postgres
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/fairportal
REDIS_HOST ?= 127.0.0.1
REDIS_PORT ?= 6379
PYTEST_ARGS ?=
# Tests publish to their own Redis database, so a running `make run` never sees their messages.
TEST_CELERY_BROKER_URL ?= redis://$(REDIS_HOST):$(REDIS_PORT)/5
# The local Slurm the Slurm backend's tests and bench/slurm_fairshare.py run against.
SLURM_DIR ?= $(CURDIR)/var/slurm

ifeq ($(DB),sqlite)
TEST_DB_URL := sqlite:///$(CURDIR)/var/test.sqlite3
else
TEST_DB_URL := $(TEST_DATABASE_URL)
endif

.PHONY: install install-test run test lint services chromium prometheus slurm bench bench-web bench-loop bench-lane bench-slurm bench-slurm-release migrate static seed clean redis postgres

# `make run` installs the runtime only; `make test` adds the test and benchmark packages.
$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(STAMP)

$(TEST_STAMP): $(STAMP) requirements-test.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	@touch $(TEST_STAMP)

install: $(STAMP)

install-test: $(TEST_STAMP)

# `make run` is the DEBUG=false profile on loopback: a random SECRET_KEY made once (var/secret_key).
$(SECRET_KEY_PATH):
	@mkdir -p var
	@umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(64))" > $(SECRET_KEY_PATH)

run migrate static seed: export SECRET_KEY_FILE = $(SECRET_KEY_PATH)

migrate: install $(SECRET_KEY_PATH)
	@mkdir -p var
	$(PY) manage.py migrate --noinput

# Static files for WhiteNoise: hashed names and gzip copies in var/staticfiles.
static: install $(SECRET_KEY_PATH)
	$(PY) manage.py collectstatic --noinput -v 0

seed: migrate
	@set -o pipefail; umask 077; $(PY) manage.py seed_demo --if-empty --history 6h | tee -a var/demo-logins.log

# Redis carries Celery's messages: start a local redis-server when installed but not running.
redis:
	@if $(PY) -c "import redis,sys; redis.Redis(host='$(REDIS_HOST)', port=$(REDIS_PORT), socket_connect_timeout=1).ping()" 2>/dev/null; then \
		echo "Redis answers on $(REDIS_HOST):$(REDIS_PORT)"; \
	elif command -v redis-server >/dev/null; then \
		echo "Starting a local redis-server on $(REDIS_PORT)"; \
		mkdir -p var/redis && redis-server --daemonize yes --bind 127.0.0.1 --port $(REDIS_PORT) --save "" --appendonly no --dir $(CURDIR)/var/redis --logfile $(CURDIR)/var/redis/redis.log; \
		sleep 1; \
	else \
		echo "Redis is not reachable on $(REDIS_HOST):$(REDIS_PORT) and redis-server is not installed."; \
		echo "Install it (apt-get install redis-server) or point REDIS_URL at a running Redis."; exit 1; \
	fi

run: seed static redis
	@echo ""
	@echo "  fairportal is starting on http://127.0.0.1:$(PORT)/ (this machine only)"
	@echo "  Admin: http://127.0.0.1:$(PORT)/admin/   demo logins: admin (staff), alice and bob (tenants);"
	@echo "  their passwords were printed when the demo was loaded (var/demo-logins.log)"
	@echo ""
	PORT=$(PORT) $(VENV)/bin/honcho start -f Procfile

# PostgreSQL for the tests (CI's database); started when installed but stopped.
postgres:
	@if [ "$(DB)" = "sqlite" ]; then exit 0; fi; \
	if pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then exit 0; fi; \
	if command -v pg_ctlcluster >/dev/null; then \
		echo "Starting PostgreSQL"; pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start; sleep 2; \
	else echo "PostgreSQL is not reachable on 127.0.0.1:5432; set TEST_DATABASE_URL or use make test DB=sqlite"; exit 1; fi

# Debian's Chromium for the browser tests (Playwright is pointed at /usr/bin/chromium).
chromium:
	@command -v chromium >/dev/null || { \
		echo "Installing Debian's chromium for the browser tests"; \
		if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# Debian's Prometheus for the interop tests, which start the binary themselves (temporary
# config and storage, a free loopback port); it is never run as a system service here.
prometheus:
	@command -v prometheus >/dev/null && command -v promtool >/dev/null || { \
		echo "Installing Debian's prometheus for the metrics tests"; \
		if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }

# A real local Slurm (Debian's slurm-wlm 22.05, munge, slurmdbd on a private MariaDB) for the
# Slurm backend's tests: installed with apt-get when absent, started when down; about a second
# when it already runs. deploy/slurm/local-slurm.sh stop stops it.
slurm:
	@if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO env FAIRPORTAL_SLURM_DIR=$(SLURM_DIR) deploy/slurm/local-slurm.sh start >/dev/null

services: postgres redis chromium prometheus slurm

# Lint: ruff (rules in pyproject.toml), mypy with django-stubs over the four packages, and the
# import contracts (engine pure, queues below budgets/playground, no cycles: lint-imports).
lint: install-test
	$(VENV)/bin/ruff check .
	DEBUG=true $(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

# DEBUG=true for the settings (plain static files, the development key); pytest-django still
# runs every test with DEBUG off, as production does. `make lint` runs first (so in CI too).
test: install-test services lint
	@mkdir -p var
	DEBUG=true DATABASE_URL=$(TEST_DB_URL) CELERY_BROKER_URL=$(TEST_CELERY_BROKER_URL) CELERY_RESULT_BACKEND=$(TEST_CELERY_BROKER_URL) \
		TEST_CELERY_BROKER_URL=$(TEST_CELERY_BROKER_URL) SLURM_CONF=$(SLURM_DIR)/etc/slurm.conf \
		FAIRPORTAL_SLURM_DIR=$(SLURM_DIR) $(PY) -m pytest $(PYTEST_ARGS)

bench: install-test
	$(PY) bench/engine.py

# Web dashboard latency at 1,000 LocalQueues and 100,000 workloads (own PostgreSQL database fp_bench_web).
bench-web: install-test postgres
	$(PY) bench/web.py

# Slurm's multifactor fair share and fairportal driving the same Slurm, one trace (own database fp_bench_slurm).
bench-slurm: install-test postgres slurm
	SLURM_CONF=$(SLURM_DIR)/etc/slurm.conf FAIRPORTAL_SLURM_DIR=$(SLURM_DIR) $(PY) bench/slurm_fairshare.py

# Import and release throughput vs plain INSERTs and per-job scontrol (SLURM_CONF, SLURM_BIN_DIR pick the Slurm).
bench-slurm-release: install-test postgres slurm
	SLURM_CONF=$(SLURM_DIR)/etc/slurm.conf FAIRPORTAL_SLURM_DIR=$(SLURM_DIR) $(PY) bench/slurm_release.py

# Admission wait while what-ifs run, per worker layout (own database fp_bench_lane, real workers).
bench-lane: install-test postgres redis
	$(PY) bench/whatif_lane.py

# The control loop at 10,000 LocalQueues: own PostgreSQL databases (fp_bench_loop, fp_bench_loop_seed;
# BENCH_DATABASE_URL to change them), Celery workers on a real Redis broker (BENCH_BROKER_URL, db 14).
bench-loop: install-test postgres redis
	$(PY) bench/control_loop.py

clean:
	rm -rf var/test.sqlite3 .pytest_cache
