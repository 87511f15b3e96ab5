#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stop the Prometheus server that prometheus-start.sh started in DIR: SIGTERM to the PID in DIR/prometheus.pid
# if that process is a live prometheus (a reused PID is left alone), SIGKILL after 10 s, and wait until it is
# gone (a zombie counts as gone). Running it again, or on a DIR whose server was killed, or on a DIR that does
# not exist, is a no-op that succeeds.
#
# Usage: prometheus-stop.sh -d DIR [--locked]
#   --locked   the caller (prometheus-start.sh) already holds DIR/.lock
set -euo pipefail

DIR=""
LOCKED=0
while [ $# -gt 0 ]; do
    case $1 in
    -d) DIR=${2:?-d wants a directory}; shift 2 ;;
    --locked) LOCKED=1; shift ;;
    -h) sed -n '3,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "prometheus-stop: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "prometheus-stop: $*" >&2; }
[ -n "$DIR" ] || { log "-d DIR is required"; exit 2; }
[ -d "$DIR" ] || exit 0
if [ "$LOCKED" -eq 0 ]; then
    exec 9>"$DIR/.lock"
    flock -w 60 9 || { log "another start or stop holds $DIR/.lock"; exit 1; }
fi

live() {
    local stat
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    case ${stat%% *} in Z | X | x) return 1 ;; esac
}
gone_within() { # PID SECONDS
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        live "$1" || return 0
        sleep 0.05
    done
    return 1
}

pid=$(tr -dc 0-9 2>/dev/null <"$DIR/prometheus.pid") || pid=""
comm=""
[ -z "$pid" ] || read -r comm 2>/dev/null <"/proc/$pid/comm" || true
if [ -n "$pid" ] && [ "$comm" = prometheus ] && live "$pid"; then
    kill -TERM "$pid" 2>/dev/null || true
    if ! gone_within "$pid" 10; then
        log "SIGKILL $pid"
        kill -KILL "$pid" 2>/dev/null || true
        gone_within "$pid" 10 || { log "prometheus $pid does not die"; exit 1; }
    fi
fi
rm -f "$DIR/prometheus.pid"
