#!/bin/sh
# One Quizgate host: WEB_CONCURRENCY uvicorn workers on ADDRESS:PORT and a Celery worker, one process group, as
# `make serve` starts them (without its migrate and collectstatic: run those once, see deploy/README.md).
#   deploy/host.sh 127.0.0.11            # this machine's first "host"
#   deploy/host.sh 0.0.0.0               # a real machine (its firewall lets only the load balancer in)
# The environment comes from the caller (an env file: deploy/quizgate.env.example).
set -eu
ADDRESS=${1:?give the address to bind, e.g. 127.0.0.11}
PORT=${PORT:-8000}
PY=${PY:-.venv/bin/python}
cd "$(dirname "$0")/.."
trap 'kill 0' INT TERM EXIT
$PY -m celery -A config worker --loglevel INFO --concurrency "${CELERY_CONCURRENCY:-2}" -n "worker@$ADDRESS" &
$PY -m config.serve --host "$ADDRESS" --port "$PORT" --workers "${WEB_CONCURRENCY:-2}" \
    --ws-per-message-deflate false --log-level warning &
wait
