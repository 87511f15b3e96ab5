#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stop the SLURM cluster that slurm-start.sh started in DIR, and only it: the daemons named by DIR/run/*.pid
# (checked against their executable name, so a reused PID is left alone), then the steps and tasks that
# outlive slurmd: any slurmstepd with its working directory or an open file under DIR, and whatever runs in
# the UTS namespaces recorded in DIR/run/*.uts once one of their processes is shown to belong to DIR. Waits
# until each is gone (a zombie counts as gone: it holds no port, file or socket). In cgroup mode it removes
# the cgroups the cluster left behind. Running it again, or on a DIR whose processes were killed, or on a DIR
# that does not exist, is a no-op that succeeds.
#
# Usage: slurm-stop.sh -d DIR [--locked]
#   --locked   the caller (slurm-start.sh) already holds DIR/.lock
set -euo pipefail

DIR=""
LOCKED=0
while [ $# -gt 0 ]; do
    case $1 in
    -d) DIR=${2:?-d wants a directory}; shift 2 ;;
    --locked) LOCKED=1; shift ;;
    -h) sed -n '3,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "slurm-stop: unknown argument $1" >&2; exit 2 ;;
    esac
done
log() { echo "slurm-stop: $*" >&2; }
[ -n "$DIR" ] || { log "-d DIR is required"; exit 2; }
[ -d "$DIR" ] || exit 0
DIR=$(cd "$DIR" && pwd)
if [ "$LOCKED" -eq 0 ]; then
    exec 9>"$DIR/.lock"
    flock -w 120 9 || { log "another start or stop holds $DIR/.lock"; exit 1; }
fi
T0=$EPOCHREALTIME

live() {
    local stat
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    case ${stat%% *} in Z | X | x) return 1 ;; esac
}
pid_in() {
    local pid comm
    pid=$(tr -dc 0-9 2>/dev/null <"$1") || return 1
    [ -n "$pid" ] && live "$pid" && read -r comm 2>/dev/null <"/proc/$pid/comm" && [ "$comm" = "$2" ] && echo "$pid"
}
# stop SECONDS PID...: SIGTERM, wait up to SECONDS for every PID to be gone, SIGKILL the rest and wait for them
stop() {
    local grace=$1 p left i
    shift
    [ $# -gt 0 ] || return 0
    kill -TERM "$@" 2>/dev/null || true
    left=("$@")
    for ((i = 0; i < grace * 20; i++)); do
        left=()
        for p in "$@"; do live "$p" && left+=("$p"); done
        [ ${#left[@]} -gt 0 ] || return 0
        sleep 0.05
    done
    [ "$grace" -eq 0 ] || log "SIGKILL ${left[*]}"
    kill -KILL "${left[@]}" 2>/dev/null || true
    for ((i = 0; i < 200; i++)); do
        left=()
        for p in "$@"; do live "$p" && left+=("$p"); done
        [ ${#left[@]} -gt 0 ] || return 0
        sleep 0.05
    done
    log "still alive after SIGKILL: ${left[*]}"
    return 1
}
# leftovers: print the live processes of this cluster that outlived slurmd. A slurmstepd is ours when its
# working directory or an open file is under DIR. A UTS namespace recorded in DIR/run/*.uts is ours when one of
# its processes is such a slurmstepd or has SLURM_CONF=DIR/etc/slurm.conf in its environment (a job task); then
# everything in it is ours. (A namespace inode is reused once the namespace is gone, so a recorded inode alone
# proves nothing after a killed run.)
leftovers() {
    local uts=" " ours=" " f ns pid stat comm pids
    local -A members=()
    for f in "$DIR"/run/*.uts; do [ -s "$f" ] && read -r ns <"$f" && uts+="$ns "; done
    while read -r pid ns stat comm; do
        case $stat in Z* | X* | x*) continue ;; esac
        if [ "$comm" = slurmstepd ] &&
            [ -n "$(find "/proc/$pid/cwd" "/proc/$pid/fd" -maxdepth 1 -lname "$DIR/*" -print -quit 2>/dev/null)" ]; then
            ours+="$ns "
            echo "$pid"
            continue
        fi
        [[ $uts == *" $ns "* ]] || continue
        members[$ns]+=" $pid"
        grep -qzxF "SLURM_CONF=$DIR/etc/slurm.conf" "/proc/$pid/environ" 2>/dev/null && ours+="$ns "
    done < <(ps -e -o pid=,utsns=,stat=,comm=)
    for ns in "${!members[@]}"; do
        if [[ $ours == *" $ns "* ]]; then
            read -ra pids <<<"${members[$ns]}"
            printf '%s\n' "${pids[@]}"
        fi
    done
}

rc=0
# 1. slurmd and slurmctld; munged last, since both talk to it while they shut down. Jobs are not cancelled
# first: killing their processes is quicker, and as certain.
pids=()
for f in "$DIR"/run/slurmd-*.pid; do p=$(pid_in "$f" slurmd) && pids+=("$p"); done
p=$(pid_in "$DIR/run/slurmctld.pid" slurmctld) && pids+=("$p")
if [ ${#pids[@]} -gt 0 ]; then
    log "stopping slurmd and slurmctld: ${pids[*]}"
    stop 5 "${pids[@]}" || rc=1
fi
# 2. steps and tasks that outlived their slurmd: the tasks get SIGTERM first; slurmstepd ignores SIGTERM, so it
# gets SIGKILL at once after them
mapfile -t pids < <(leftovers)
if [ ${#pids[@]} -gt 0 ]; then
    log "stopping leftover steps and tasks: ${pids[*]}"
    steps=()
    tasks=()
    for p in "${pids[@]}"; do
        comm=""
        read -r comm 2>/dev/null <"/proc/$p/comm" || true
        if [ "$comm" = slurmstepd ]; then steps+=("$p"); else tasks+=("$p"); fi
    done
    stop 1 "${tasks[@]}" || rc=1
    stop 0 "${steps[@]}" || rc=1
fi
if p=$(pid_in "$DIR/run/munged.pid" munged); then
    log "stopping munged: $p"
    stop 5 "$p" || rc=1
fi
[ "$rc" -eq 0 ] || { log "some processes would not stop; pidfiles kept"; exit 1; }

# 3. cgroup mode: the cgroups of this cluster's jobs (slurm_<node>/uid_*/job_<id>, ids from FirstJobId on) that
# killed steps left behind, then slurm_<node>/uid_* and slurm_<node> if empty. Other clusters on this host with
# the same node names share slurm_<node>/uid_<uid>; their jobs have other ids.
first=$(sed -n 's/^FirstJobId=//p' "$DIR/etc/slurm.conf" 2>/dev/null) || first=""
if [ -n "$first" ] && grep -q '^ProctrackType=proctrack/cgroup' "$DIR/etc/slurm.conf"; then
    for n in "$DIR"/spool/*; do
        n=${n##*/}
        for job in /sys/fs/cgroup/*/slurm_"$n"/uid_*/job_*; do
            id=${job##*/job_}
            if [ ! -d "$job" ] || [ "$id" -lt "$first" ] || [ "$id" -ge $((first + 1000)) ]; then continue; fi
            find "$job" -depth -type d -exec rmdir {} + 2>/dev/null || true
        done
        for c in /sys/fs/cgroup/*/slurm_"$n"/uid_* /sys/fs/cgroup/*/slurm_"$n"; do
            if [ -d "$c" ]; then rmdir "$c" 2>/dev/null || true; fi
        done
    done
fi
rm -f "$DIR"/run/*.pid "$DIR"/run/*.uts "$DIR/munge/munge.socket" "$DIR/munge/munge.socket.lock"
log "stopped in $(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s"
