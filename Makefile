# fairportal: `make run` starts the demo, `make test` runs the lint and the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-requirements
TEST_STAMP := $(VENV)/.installed-test-requirements
SECRET_KEY_PATH := $(CURDIR)/var/secret_key
# var/ holds the key, the SQLite database (sessions) and the demo's passwords: this user's only.
PRIVATE_VAR := install -d -m 0700 var && chmod 0700 var
PORT ?= 8000
# The directory every process of `make run` writes the control loop's metrics to; /metrics sums
# them (docs/prometheus.md). `make run` empties it once, before it starts the processes.
METRICS_DIR ?= $(CURDIR)/var/prometheus-multiproc
DB ?= postgres
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/fairportal
REDIS_HOST ?= 127.0.0.1
REDIS_PORT ?= 6379
PYTEST_ARGS ?=
# Tests publish to their own Redis database, so a running `make run` never sees their messages.
TEST_CELERY_BROKER_URL ?= redis://$(REDIS_HOST):$(REDIS_PORT)/5
# The local Slurms the Slurm backend's tests run against, one per version (bench/slurm_*.py use
# 22.05's): 22.05 in SLURM_DIR, the others in slurm-<version> next to it, sharing 22.05's MariaDB.
SLURM_DIR ?= $(CURDIR)/var/slurm
SLURM_VERSIONS ?= 22.05 24.11 26.05
SLURM_MYSQL_PORT ?= 3307
# Port bases (ctld = base+17, dbd = base+19, slurmd = base+31..); empty: 6800, 6900, 7000.
SLURM_PORT_BASE_22.05 ?=
SLURM_PORT_BASE_24.11 ?=
SLURM_PORT_BASE_26.05 ?=
slurm_dir = $(if $(filter 22.05,$(1)),$(SLURM_DIR),$(patsubst %/,%,$(dir $(SLURM_DIR)))/slurm-$(1))
SLURM_DIRS := $(foreach v,$(SLURM_VERSIONS),$(call slurm_dir,$(v)))

ifeq ($(DB),sqlite)
TEST_DB_URL := sqlite:///$(CURDIR)/var/test.sqlite3
else
TEST_DB_URL := $(TEST_DATABASE_URL)
endif

.PHONY: metrics-dir install install-test install-ldap ldap-headers slapd oidc-provider axe run test lint services chromium prometheus podman image token changepassword slurm bench bench-web bench-loop bench-lane bench-slurm bench-slurm-release bench-multicluster bench-slurms migrate static seed clean redis postgres

# `make run` installs the runtime only; `make test` adds the test and benchmark packages.
$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(STAMP)

$(TEST_STAMP): $(STAMP) requirements-test.txt requirements-ldap.txt | ldap-headers
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-test.txt
	@touch $(TEST_STAMP)

install: $(STAMP)

install-test: $(TEST_STAMP)

# LDAP sign-in (an optional extra, docs/sign-in.md): python-ldap compiles against OpenLDAP's headers.
ldap-headers:
	@dpkg -s libldap2-dev libsasl2-dev build-essential python3-dev >/dev/null 2>&1 || { \
		echo "Installing the headers python-ldap builds against"; \
		if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq libldap2-dev libsasl2-dev build-essential python3-dev >/dev/null; }

install-ldap: install ldap-headers
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-ldap.txt

# `make run` is the DEBUG=false profile on loopback: a random SECRET_KEY made once (var/secret_key).
$(SECRET_KEY_PATH):
	@$(PRIVATE_VAR)
	@umask 077 && $(PYTHON) -c "import secrets; print(secrets.token_urlsafe(64))" > $(SECRET_KEY_PATH)

run migrate static seed: export SECRET_KEY_FILE = $(SECRET_KEY_PATH)

migrate: install $(SECRET_KEY_PATH)
	@$(PRIVATE_VAR)
	$(PY) manage.py migrate --noinput

# Static files for WhiteNoise: hashed names and gzip copies in var/staticfiles.
static: install $(SECRET_KEY_PATH)
	umask 077 && $(PY) manage.py collectstatic --noinput -v 0

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

# Empty the metrics directory (its *.db files only), once per start of all the processes: a
# process never empties it, or the counts of the others would be lost.
metrics-dir:
	@PROMETHEUS_MULTIPROC_DIR="$(METRICS_DIR)" deploy/run-role metrics-dir

run: seed static redis metrics-dir
	@echo ""
	@echo "  fairportal is starting on http://127.0.0.1:$(PORT)/ (this machine only)"
	@echo "  Admin: http://127.0.0.1:$(PORT)/admin/   demo logins: admin (staff), alice and bob (tenants);"
	@echo "  their passwords were printed when the demo was loaded (var/demo-logins.log)"
	@echo ""
	@echo "  API token: make -s token USER=alice   other password: make changepassword USER=admin"
	@echo ""
	@# honcho hands each process its own PORT (web's + 100 per line): the banner reads WEB_PORT.
	@# Files made in var/ (beat's schedule) are this user's only; older ones lose group/other access.
	@find var -maxdepth 1 -type f -exec chmod go= {} +; chmod -R go= var/staticfiles
	umask 077 && WEB_PORT=$(PORT) PORT=$(PORT) PROMETHEUS_MULTIPROC_DIR="$(METRICS_DIR)" $(VENV)/bin/honcho start -f Procfile

# A new API token for USER of the demo (only the key on stdout; an error and a non-zero exit
# otherwise): FAIRPORTAL_TOKEN=$$(make -s token USER=alice) && export FAIRPORTAL_TOKEN
# bin/manage is manage.py with the venv and var/secret_key.
token:
	@if [ "$(origin USER)" != "command line" ]; then echo "usage: make -s token USER=alice" >&2; exit 2; fi
	@set -o pipefail; bin/manage create_api_token '$(USER)' | awk '/^Generated token /{print $$3; found=1} END{exit !found}'

# Set another password for USER of the demo: make changepassword USER=admin
changepassword:
	@if [ "$(origin USER)" != "command line" ]; then echo "usage: make changepassword USER=admin" >&2; exit 2; fi
	bin/manage changepassword '$(USER)'

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

# Real local Slurms (munge, slurmctld, two slurmd, slurmdbd on a private MariaDB) for the Slurm
# backend's tests, started side by side: 22.05 is Debian 12's slurm-wlm (apt-get when absent),
# 24.11 and 26.05 run in Debian 13/unstable roots that deploy/slurm/slurm-rootfs.sh builds once
# per machine (/var/lib/fairportal/slurm-rootfs). A second run only checks they answer.
# Stop one with: FAIRPORTAL_SLURM_DIR=<its dir> deploy/slurm/local-slurm.sh stop (22.05's last).
slurm:
	@if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; mkdir -p var; pids=""; \
	$(foreach v,$(SLURM_VERSIONS),$$SUDO env FAIRPORTAL_SLURM_VERSION=$(v) FAIRPORTAL_SLURM_DIR=$(call slurm_dir,$(v)) \
		FAIRPORTAL_SLURM_MYSQL_DIR=$(SLURM_DIR) FAIRPORTAL_SLURM_MYSQL_PORT=$(SLURM_MYSQL_PORT) \
		$(if $(SLURM_PORT_BASE_$(v)),FAIRPORTAL_SLURM_PORT_BASE=$(SLURM_PORT_BASE_$(v))) \
		deploy/slurm/local-slurm.sh start >var/slurm-start-$(v).log 2>&1 & pids="$$pids $(v):$$!";) \
	failed=""; for entry in $$pids; do wait "$${entry#*:}" || failed="$$failed $${entry%%:*}"; done; \
	for v in $$failed; do echo "Slurm $$v did not start (var/slurm-start-$$v.log):"; tail -5 "var/slurm-start-$$v.log"; done; \
	test -z "$$failed"; \
	for v in $(filter-out 22.05,$(SLURM_VERSIONS)); do \
		$$SUDO env FAIRPORTAL_SLURM_DIR=$$(echo $(SLURM_DIRS) | tr ' ' '\n' | grep -- "-$$v$$") deploy/slurm/local-slurm.sh start-rest \
			>>var/slurm-start-$$v.log 2>&1 || { echo "slurmrestd $$v did not start (var/slurm-start-$$v.log)"; tail -5 "var/slurm-start-$$v.log"; exit 1; }; \
	done

# The sign-in tests' directory servers, which the tests start themselves on free loopback ports:
# Debian's slapd (never run as a system service here) and the npm oidc-provider (var/oidc-node).
OIDC_PROVIDER_VERSION ?= 9.13.3
slapd:
	@command -v slapd >/dev/null && command -v ldapadd >/dev/null || { \
		echo "Installing Debian's slapd and ldap-utils for the sign-in tests"; \
		if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq slapd ldap-utils >/dev/null; }

oidc-provider:
	@test -f var/oidc-node/node_modules/oidc-provider/package.json && grep -q '"version": "$(OIDC_PROVIDER_VERSION)"' var/oidc-node/node_modules/oidc-provider/package.json || { \
		mkdir -p var/oidc-node && npm install --silent --no-audit --no-fund --prefix var/oidc-node oidc-provider@$(OIDC_PROVIDER_VERSION); }

# axe-core from npm (var/axe-node): the accessibility audit tests/e2e/test_accessibility.py injects
# into every page in Chromium.
AXE_CORE_VERSION ?= 4.14.1
axe:
	@test -f var/axe-node/node_modules/axe-core/package.json && grep -q '"version": "$(AXE_CORE_VERSION)"' var/axe-node/node_modules/axe-core/package.json || { \
		mkdir -p var/axe-node && npm install --silent --no-audit --no-fund --prefix var/axe-node axe-core@$(AXE_CORE_VERSION); }

# Debian's podman (and runc, debootstrap) for the container test, which builds the image on a
# base made from Debian's packages (deploy/container/base-image.sh): no container registry.
podman:
	@command -v podman >/dev/null && command -v runc >/dev/null && command -v debootstrap >/dev/null || { \
		echo "Installing Debian's podman for the container test"; \
		if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq podman runc debootstrap >/dev/null; }

# The one image of web, workers and beat (Containerfile), on the base made once per machine.
image: podman
	deploy/container/build-image.sh

services: postgres redis chromium prometheus podman slurm slapd oidc-provider axe

# Lint: ruff (rules in pyproject.toml), mypy with django-stubs over the five packages, and the
# import contracts (fairshare pure and layered, queues below budgets/playground, no cycles: lint-imports).
lint: install-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	DEBUG=true $(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	DEBUG=true DATABASE_URL=sqlite:///:memory: $(PY) manage.py makemigrations --check --dry-run

# DEBUG=true for the settings (plain static files, the development key); pytest-django still
# runs every test with DEBUG off, as production does. `make lint` runs first (so in CI too).
test: install-test services lint
	@$(PRIVATE_VAR)
	DEBUG=true DATABASE_URL=$(TEST_DB_URL) CELERY_BROKER_URL=$(TEST_CELERY_BROKER_URL) CELERY_RESULT_BACKEND=$(TEST_CELERY_BROKER_URL) \
		TEST_CELERY_BROKER_URL=$(TEST_CELERY_BROKER_URL) SLURM_CONF=$(SLURM_DIR)/etc/slurm.conf \
		FAIRPORTAL_SLURM_DIR=$(SLURM_DIR) FAIRPORTAL_SLURM_DIRS="$(SLURM_DIRS)" $(PY) -m pytest $(PYTEST_ARGS)

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

# The same trace on two real Slurms (22.05 and 24.11): each one's own fair share vs fairportal's one
# ledger over both (own database fp_bench_multicluster). The two clusters are the bench's own
# (bench-slurms: own directories and ports), so the tests' Slurms stay free and no test cancels its jobs.
BENCH_SLURM_BASE ?= $(CURDIR)/var/slurm-bench
BENCH_SLURM_DIRS := $(BENCH_SLURM_BASE)-22.05 $(BENCH_SLURM_BASE)-24.11
BENCH_SLURM_PORT_BASES ?= 7800 7900
BENCH_SLURM_MYSQL_PORT ?= 3357
bench-multicluster: install-test postgres bench-slurms
	BENCH_SLURM_DIRS="$(BENCH_SLURM_DIRS)" $(PY) bench/multicluster.py

# var/ must be traversable (not listable) by munged's check of its socket's directories.
bench-slurms:
	@if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; mkdir -p var && chmod 0711 var; \
	set -- $(BENCH_SLURM_PORT_BASES); for v in 22.05 24.11; do \
		$$SUDO env FAIRPORTAL_SLURM_VERSION=$$v FAIRPORTAL_SLURM_DIR=$(BENCH_SLURM_BASE)-$$v FAIRPORTAL_SLURM_PORT_BASE=$$1 \
			FAIRPORTAL_SLURM_MYSQL_DIR=$(BENCH_SLURM_BASE)-22.05 FAIRPORTAL_SLURM_MYSQL_PORT=$(BENCH_SLURM_MYSQL_PORT) \
			deploy/slurm/local-slurm.sh start >var/slurm-bench-start-$$v.log 2>&1 \
			|| { echo "Slurm $$v for the bench did not start (var/slurm-bench-start-$$v.log):"; tail -5 var/slurm-bench-start-$$v.log; exit 1; }; \
		shift; done

# Admission wait while what-ifs run, per worker layout (own database fp_bench_lane, real workers).
bench-lane: install-test postgres redis
	$(PY) bench/whatif_lane.py

# The control loop at 10,000 LocalQueues: own PostgreSQL databases (fp_bench_loop, fp_bench_loop_seed;
# BENCH_DATABASE_URL to change them), Celery workers on a real Redis broker (BENCH_BROKER_URL, db 14).
bench-loop: install-test postgres redis
	$(PY) bench/control_loop.py

clean:
	rm -rf var/test.sqlite3 .pytest_cache
