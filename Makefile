# Two commands for a fresh machine: `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8000
HOST ?= 127.0.0.1

.PHONY: run test install install-dev browser haproxy lint format serve docs

$(VENV)/bin/python:
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.runtime: requirements.txt | $(VENV)/bin/python
	$(PIP) install -q -r requirements.txt
	touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt | $(VENV)/bin/python
	$(PIP) install -q -r requirements-dev.txt
	touch $(VENV)/.runtime $@

install: $(VENV)/.runtime
install-dev: $(VENV)/.dev

# A quiz night on this machine's network: phones on the same Wi-Fi join by the QR code. Debug off (no debug
# page reaches the network), static files from WhiteNoise, a secret generated once into .local-secret, plain
# http on the LAN (QUIZ_LOCAL_NETWORK). `make run RUN_HOST=127.0.0.1` keeps it to this machine (QUIZ_BIND_HOST
# tells the app so: its join link and QR code then never name the LAN address, which no phone could reach).
# config.serve is uvicorn with the server's limits from settings (WS_SERVER_MAX_BYTES).
# The embedded default: SQLite, in-memory channel layer, Celery tasks in-process, no keys, no Redis.
RUN_HOST ?= 0.0.0.0
RUN_ENV := DJANGO_DEBUG=0 QUIZ_LOCAL_NETWORK=1 DJANGO_SECRET_KEY_FILE=.local-secret

.local-secret:
	@umask 077; python3 -c "import secrets; print(secrets.token_urlsafe(50))" > $@

run: install .local-secret
	$(RUN_ENV) $(PY) manage.py migrate --noinput
	$(RUN_ENV) $(PY) manage.py load_packs
	$(RUN_ENV) $(PY) manage.py purge_old_data
	$(RUN_ENV) $(PY) manage.py compile_translations
	$(RUN_ENV) $(PY) manage.py collectstatic --noinput -v 0
	QUIZ_BIND_HOST=$(RUN_HOST) $(RUN_ENV) $(PY) -m config.serve --host $(RUN_HOST) --port $(PORT) --log-level warning

# The production set on one machine: WEB_CONCURRENCY uvicorn processes sharing PORT, and a Celery
# worker. Needs DATABASE_URL, REDIS_URL and DJANGO_SECRET_KEY (see docs/operators/production.md).
# Every process's metrics go to files in METRICS_DIR and /metrics sums them (core/metrics.py); emptied at each start.
METRICS_DIR ?= $(CURDIR)/.metrics

serve: install
	@test -n "$$DATABASE_URL" -a -n "$$REDIS_URL" -a -n "$$DJANGO_SECRET_KEY" || { echo "set DATABASE_URL, REDIS_URL and DJANGO_SECRET_KEY"; exit 1; }
	$(PY) manage.py migrate --noinput
	$(PY) manage.py load_packs
	$(PY) manage.py compile_translations
	$(PY) manage.py collectstatic --noinput -v 0
	rm -rf $(METRICS_DIR) && mkdir -p $(METRICS_DIR)
	trap 'kill 0' INT TERM EXIT; export PROMETHEUS_MULTIPROC_DIR=$(METRICS_DIR); \
	$(PY) -m celery -A config beat --loglevel WARNING --schedule .celerybeat-schedule & \
	$(PY) -m celery -A config worker --loglevel INFO --concurrency $${CELERY_CONCURRENCY:-2} & \
	$(PY) -m config.serve --host $(HOST) --port $(PORT) --workers $${WEB_CONCURRENCY:-2} --ws-per-message-deflate false --log-level warning & \
	wait

# Debian's Chromium for the real-browser tests (Playwright cannot download its own browser here).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "Install Chromium first: sudo apt-get install chromium"; exit 1; fi; }

# Debian's HAProxy for the test of hosts behind the load balancer (tests/lobby/test_host_loss.py, deploy/).
haproxy:
	@command -v haproxy >/dev/null 2>&1 || test -x /usr/sbin/haproxy || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq haproxy >/dev/null; \
	  else echo "Install HAProxy first: sudo apt-get install haproxy"; exit 1; fi; }

# The manual (docs/, mkdocs.yml), warnings as errors, into build/site/ (git ignores it); nothing is fetched.
docs: install-dev
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site

# Runs against PostgreSQL + Redis when DATABASE_URL / REDIS_URL are set, SQLite + in-memory otherwise.
test: install-dev browser haproxy
	$(VENV)/bin/lint-imports
	$(MAKE) --no-print-directory docs
	$(PY) -m pytest -q -rs

lint:
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format:
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .
