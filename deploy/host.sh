#!/bin/sh
# One Quizgate host: WEB_CONCURRENCY uvicorn workers on ADDRESS:PORT and a Celery worker, one process group, as
# `make serve` starts them (without its migrate and collectstatic: run those once, see deploy/README.md).
#   deploy/host.sh 127.0.0.11 --beat     # this machine's first "host", which also runs the site's one Celery beat
#   deploy/host.sh 127.0.0.12            # the others
#   deploy/host.sh 0.0.0.0               # a real machine (its firewall lets only the load balancer in)
# --beat: this host also runs Celery beat, which queues the scheduled tasks (the daily retention purge) for any
# host's worker. Exactly one host of a site runs it: two would queue every task twice, none would never purge.
# The environment comes from the caller (an env file: deploy/quizgate.env.example).
set -eu
ADDRESS=${1:?give the address to bind, e.g. 127.0.0.11}
BEAT=${2:-}
PORT=${PORT:-8000}
PY=${PY:-.venv/bin/python}
cd "$(dirname "$0")/.."
# Stopping, once: every process of the group gets one SIGTERM from here, and the signals it sends back to this shell
# are ignored (a plain `kill 0` in this trap ran again on each of them and sent the group more).
stop() {
    trap '' INT TERM
    trap - EXIT
    kill -TERM 0 2>/dev/null || true
    wait || true
}
trap stop INT TERM EXIT
$PY -m celery -A config worker --loglevel INFO --concurrency "${CELERY_CONCURRENCY:-2}" -n "worker@$ADDRESS" &
if [ "$BEAT" = "--beat" ]; then
    # Its schedule file (when each task last ran) lives beside the checkout, one per host that may run it.
    $PY -m celery -A config beat --loglevel INFO --schedule "${BEAT_SCHEDULE_FILE:-.celerybeat-schedule-$ADDRESS}" &
elif [ -n "$BEAT" ]; then
    echo "unknown option $BEAT (only --beat)" >&2
    exit 2
fi
$PY -m config.serve --host "$ADDRESS" --port "$PORT" --workers "${WEB_CONCURRENCY:-2}" \
    --ws-per-message-deflate false --log-level warning &
wait
