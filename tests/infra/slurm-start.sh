#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Start a private SLURM cluster on this host for the integration tests: munged, slurmctld and one slurmd per
# node (n1..nN), all on 127.0.0.1; slurmctld and each slurmd run in their own UTS namespace (host names ctld
# and n1..nN), so that `hostname` inside a task prints its node's name. Everything lives under DIR
# (configuration, state, spool, logs, pidfiles, munge key and socket, a world-writable work/ folder for job
# output); nothing under /etc is touched except that the test user (default jstest) is created when it does
# not exist, since jobs run as it need it on the "nodes".
#
# Usage: slurm-start.sh -d DIR [-n NODES] [-p PORT] [-P linuxproc|cgroup] [-u USER]
#   -d DIR     state directory (created; every ancestor must be searchable by USER)
#   -n NODES   number of nodes, n1..nNODES (default 3)
#   -p PORT    slurmctld port; node i's slurmd listens on PORT+i (default 17817)
#   -P TYPE    linuxproc (default): proctrack/linuxproc, task/none;
#              cgroup: proctrack/cgroup, task/cgroup (cgroup v1 under /sys/fs/cgroup/<controller>)
#   -u USER    the non-root user tests submit jobs as (default jstest)
#
# Waits until every node is idle, then prints only `export VAR=...` lines on stdout (use with eval); the same
# lines are kept in DIR/env.sh. Diagnostics go to stderr. Running it again while the same cluster is up only
# prints the environment again; anything else left in DIR (stale pidfiles, a killed run, other parameters) is
# stopped with slurm-stop.sh first and the cluster starts from empty state. Needs root. Exit status: 0 up,
# 1 failure, 2 usage, 3 SLURM or munge not installed.
set -euo pipefail

DIR=""
NODES=3
PORT=17817
PROCTRACK=linuxproc
TUSER=jstest
while getopts "d:n:p:P:u:h" opt; do
    case $opt in
    d) DIR=$OPTARG ;;
    n) NODES=$OPTARG ;;
    p) PORT=$OPTARG ;;
    P) PROCTRACK=$OPTARG ;;
    u) TUSER=$OPTARG ;;
    h) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))

log() { echo "slurm-start: $*" >&2; }
die() { echo "slurm-start: $*" >&2; exit 1; }
usage() { echo "slurm-start: $*" >&2; exit 2; }
[ $# -eq 0 ] || usage "unexpected argument: $1"
[ -n "$DIR" ] || usage "-d DIR is required"
case $NODES in '' | *[!0-9]* | 0*) usage "-n wants a positive number, not '$NODES'" ;; esac
case $PORT in '' | *[!0-9]* | 0*) usage "-p wants a port number, not '$PORT'" ;; esac
[ $((PORT + NODES)) -le 65535 ] || usage "-p $PORT leaves no room for $NODES slurmd ports"
case $PROCTRACK in linuxproc | cgroup) ;; *) usage "-P wants linuxproc or cgroup, not '$PROCTRACK'" ;; esac
[ "$(id -u)" -eq 0 ] || die "needs root (slurmd runs jobs as other users)"
for b in munged munge unmunge slurmctld slurmd scontrol sinfo srun unshare flock runuser useradd; do
    command -v "$b" >/dev/null || { echo "slurm-start: $b not installed (scripts/deps.sh installs it)" >&2; exit 3; }
done

HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
T0=$EPOCHREALTIME
CONF=$DIR/etc/slurm.conf
SOCK=$DIR/munge/munge.socket
NODE_NAMES=()
for i in $(seq 1 "$NODES"); do NODE_NAMES+=("n$i"); done
NODELIST=n1
[ "$NODES" -eq 1 ] || NODELIST="n[1-$NODES]"
PARAMS="nodes=$NODES port=$PORT proctrack=$PROCTRACK user=$TUSER"

# live PID: the process exists and is neither a zombie nor dead
live() {
    local stat
    read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
    stat=${stat##*) }
    case ${stat%% *} in Z | X | x) return 1 ;; esac
}
# pid_in FILE COMM: print the PID recorded in FILE if that process is live and named COMM
pid_in() {
    local pid comm
    pid=$(tr -dc 0-9 2>/dev/null <"$1") || return 1
    [ -n "$pid" ] && live "$pid" && read -r comm 2>/dev/null <"/proc/$pid/comm" && [ "$comm" = "$2" ] && echo "$pid"
}
# poll SECONDS CMD...: run CMD every 0.05 s until it succeeds; false once SECONDS have passed
poll() {
    local end=$((${EPOCHREALTIME/./} + $1 * 1000000))
    shift
    until "$@" >/dev/null 2>&1; do
        [ "${EPOCHREALTIME/./}" -lt "$end" ] || return 1
        sleep 0.05
    done
}
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
all_up() {
    local n
    pid_in "$DIR/run/munged.pid" munged >/dev/null || return 1
    pid_in "$DIR/run/slurmctld.pid" slurmctld >/dev/null || return 1
    for n in "${NODE_NAMES[@]}"; do pid_in "$DIR/run/slurmd-$n.pid" slurmd >/dev/null || return 1; done
}
# the nodes report STATES (a sinfo -t list): true when all NODES of them do
nodes_in() {
    [ "$(SLURM_CONF=$CONF sinfo -h -N -t "$1" -o %N | sort -u | wc -l)" -eq "$NODES" ]
}
print_env() {
    {
        echo "export SLURM_CONF=$CONF"
        echo "export JS_SLURM_DIR=$DIR"
        echo "export JS_SLURM_NODES=$(IFS=,; echo "${NODE_NAMES[*]}")"
        echo "export JS_SLURM_NODELIST='$NODELIST'"
        echo "export JS_SLURM_PLUGSTACK=$DIR/etc/plugstack.conf"
        echo "export JS_SLURM_WORKDIR=$DIR/work"
        echo "export JS_SLURM_USER=$TUSER"
        echo "export JS_SLURM_PROCTRACK=$PROCTRACK"
        echo "export JS_SLURM_PORT=$PORT"
        echo "export JS_SLURM_MUNGE_SOCKET=$SOCK"
    } >"$DIR/env.sh"
    cat "$DIR/env.sh"
}

exec 9>"$DIR/.lock"
flock -w 120 9 || die "another start or stop holds $DIR/.lock"

if [ "$(cat "$DIR/params" 2>/dev/null)" = "$PARAMS" ] && all_up; then
    poll 30 nodes_in idle,alloc,mix || die "the running cluster's nodes do not respond (see $DIR/log)"
    log "already up in $DIR"
    print_env
    exit 0
fi
if compgen -G "$DIR/run/*" >/dev/null; then
    log "stopping what a previous start left in $DIR"
    "$HERE/slurm-stop.sh" -d "$DIR" --locked 9>&- >&2 || die "could not stop the previous cluster in $DIR"
fi

# From here on a failure stops whatever this start got running.
up=0
trap '[ "$up" -eq 1 ] || "$HERE/slurm-stop.sh" -d "$DIR" --locked 9>&- >&2 || true' EXIT

# The test user: jobs run as it, so it must exist here, on the "nodes".
if ! getent passwd "$TUSER" >/dev/null; then
    log "creating user $TUSER"
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /bin/sh \
        --comment "jobscope tests" "$TUSER" >&2 || getent passwd "$TUSER" >/dev/null || die "cannot create $TUSER"
fi

# ---- layout: state is rebuilt from scratch each start; the munge key is kept
rm -rf "${DIR:?}/etc" "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run" "$DIR/munge" "$DIR/work"
mkdir -p "$DIR/etc" "$DIR/state" "$DIR/log" "$DIR/run" "$DIR/munge" "$DIR/key" "$DIR/work"
for n in "${NODE_NAMES[@]}"; do mkdir -p "$DIR/spool/$n"; done
chmod 755 "$DIR" "$DIR/etc" "$DIR/munge" # clients (the test user too) read slurm.conf and reach the socket
chmod 700 "$DIR/key"
chmod 1777 "$DIR/work"
[ -s "$DIR/key/munge.key" ] || head -c 1024 /dev/urandom >"$DIR/key/munge.key"
chmod 400 "$DIR/key/munge.key"
: >"$DIR/etc/plugstack.conf"
chmod 644 "$DIR/etc/plugstack.conf"

# each node claims the host's CPUs and memory (the nodes share the host; the scheduler does not know)
# (slurmd -C: "NodeName=vm CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=...")
HW=$(slurmd -C | head -1)
HW=$(grep -oE ' (CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore|RealMemory)=[0-9]+' <<<"$HW" | tr -d '\n')
[ -n "$HW" ] || HW=" CPUs=$(nproc) RealMemory=1024"
if [ "$PROCTRACK" = cgroup ]; then
    PLUGINS="ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/cgroup"
    cat >"$DIR/etc/cgroup.conf" <<EOF
# generated by slurm-start.sh: cgroup v1, controllers mounted at /sys/fs/cgroup/<controller>
CgroupPlugin=cgroup/v1
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=yes
ConstrainRAMSpace=yes
EOF
else
    PLUGINS="ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux"
fi
cat >"$CONF" <<EOF
# generated by slurm-start.sh ($PARAMS)
ClusterName=jstest
SlurmctldHost=ctld(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$SOCK
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$DIR/etc/plugstack.conf
$PLUGINS
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
InactiveLimit=0
MinJobAge=600
# job ids differ between clusters side by side on this host (other ports): in cgroup mode they share
# /sys/fs/cgroup/<controller>/slurm_<node>/uid_<uid>
FirstJobId=$((PORT * 1000))
KillWait=2
Waittime=0
NodeName=$NODELIST NodeAddr=127.0.0.1 Port=$((PORT + 1))-$((PORT + NODES))$HW State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
[ "$NODES" -gt 1 ] || sed -i "s/^\(NodeName=.* Port=\)[0-9]*-[0-9]*/\1$((PORT + 1))/" "$CONF"
echo "$PARAMS" >"$DIR/params"
runuser -u "$TUSER" -- test -r "$CONF" -a -w "$DIR/work" ||
    log "warning: $TUSER cannot read $CONF or write $DIR/work (an ancestor of $DIR is not searchable?):" \
        "its jobs will fail"

# ---- daemons: a clean environment (no SLURM_* of a surrounding job), stdio to the log folder, the lock
# fd closed (a daemon holding it would block every later start and stop)
daemon() { # LOGNAME HOSTNAME CMD...: run CMD in a new UTS namespace named HOSTNAME
    local name=$1 host=$2
    shift 2
    # shellcheck disable=SC2016 # $0 and $@ belong to the inner sh
    env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin JS_SLURM_DIR="$DIR" \
        unshare --uts sh -c 'hostname "$0" && exec "$@"' "$host" "$@" \
        </dev/null >>"$DIR/log/$name.out" 2>&1 9>&-
}
record_uts() { # NAME PID: keep the inode of PID's UTS namespace, for slurm-stop.sh to find what runs in it
    local ns
    ns=$(readlink "/proc/$2/ns/uts")
    ns=${ns#*[}
    echo "${ns%]}" >"$DIR/run/$1.uts"
}
munge_ok() { munge -S "$SOCK" -n </dev/null | unmunge -S "$SOCK" >/dev/null; }

# munged stays in the host's UTS namespace: it puts the address of its host name into each credential
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin JS_SLURM_DIR="$DIR" \
    munged --socket="$SOCK" --key-file="$DIR/key/munge.key" --pid-file="$DIR/run/munged.pid" \
    --log-file="$DIR/log/munged.log" --seed-file="$DIR/key/munged.seed" --num-threads=4 \
    </dev/null >>"$DIR/log/munged.out" 2>&1 9>&- ||
    die "munged failed: $(tail -3 "$DIR/log/munged.log" 2>/dev/null)"
poll 20 munge_ok || die "munged does not answer on $SOCK (see $DIR/log/munged.log)"

# started NAME PIDFILE COMM: wait for the daemon's pidfile, then record its UTS namespace
started() {
    local pid
    if poll 30 pid_in "$2" "$3" && pid=$(pid_in "$2" "$3"); then
        record_uts "$1" "$pid"
    else
        die "$3 ($1) did not start (see $DIR/log)"
    fi
}
daemon slurmctld ctld slurmctld -f "$CONF" || die "slurmctld failed (see $DIR/log/slurmctld.log)"
started ctld "$DIR/run/slurmctld.pid" slurmctld
for n in "${NODE_NAMES[@]}"; do
    daemon "slurmd-$n" "$n" slurmd -f "$CONF" -N "$n" || die "slurmd $n failed (see $DIR/log/slurmd-$n.log)"
done
for n in "${NODE_NAMES[@]}"; do started "$n" "$DIR/run/slurmd-$n.pid" slurmd; done
end=$((${EPOCHREALTIME/./} + 60000000))
until nodes_in idle 2>/dev/null; do
    all_up || die "a daemon died while the nodes registered (see $DIR/log)"
    [ "${EPOCHREALTIME/./}" -lt "$end" ] || {
        SLURM_CONF=$CONF sinfo -N >&2 || true
        die "the nodes are not idle after 60 s (see $DIR/log)"
    }
    sleep 0.05
done
up=1
log "up in $(elapsed "$T0") s: $NODELIST, slurmctld on 127.0.0.1:$PORT, $PROCTRACK, logs in $DIR/log"
print_env
