#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""A stand-in for `jobscope job` that the SPANK plugin's tests run through plugstack.conf's bin=: it records
how it was started (argv, ids, session, descriptors, signal state, environment, start time in clock ticks
since boot) into DIR/fake-NODE-STEP-PID.json, waits, and on SIGTERM records when it stopped and exits. A copy
named fake_monitor_stubborn.py records SIGTERM and keeps running (the plugin must then kill it); one named
fake_monitor_merging.py leaves jobscope job's completion marker on SIGTERM and takes 3 s more to exit (a long
merge, which the plugin must let finish)."""
import json
import os
import signal
import sys
import time

args = sys.argv[1:]


def opt(name):
    return args[args.index(name) + 1] if name in args else None


def status_mask(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1], 16)
    return None


stat = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
fds = {}
for fd in os.listdir("/proc/self/fd"):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        pass
rec = {
    "argv": args, "pid": os.getpid(), "ppid": os.getppid(), "ids": list(os.getresuid()) + list(os.getresgid()),
    "groups": os.getgroups(), "sid": os.getsid(0), "pgid": os.getpgid(0), "env": dict(os.environ), "fds": fds,
    "sig_ignored": status_mask("SigIgn"), "sig_blocked": status_mask("SigBlk"), "start_ticks": int(stat[19]),
    "cwd": os.getcwd(), "umask": os.umask(0o022),
}
try:  # the slurmstepd it was started for, to time the monitor's start against the step's
    stepd = int(opt("--stepd-pid"))
    rec["stepd_start_ticks"] = int(open(f"/proc/{stepd}/stat").read().rsplit(")", 1)[1].split()[19])
except (OSError, TypeError, ValueError):
    pass
path = os.path.join(opt("-d"), f"fake-{opt('--node')}-{opt('--step')}-{os.getpid()}.json")


def write(**extra):
    rec.update(extra)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rec, f)
    os.replace(tmp, path)


stubborn = os.path.basename(sys.argv[0]).startswith("fake_monitor_stubborn")
merging = os.path.basename(sys.argv[0]).startswith("fake_monitor_merging")


def on_term(sig, frame):
    if stubborn:
        write(term_ignored=time.time())
        return
    if merging:  # like jobscope job's end: the node's completion marker, then a long merge
        open(os.path.join(opt("-d"), f".{opt('--job')}-{opt('--node')}.done"), "w").close()
        write(marked=time.time())
        time.sleep(3)
    write(stopped=time.time())
    sys.exit(0)


signal.signal(signal.SIGTERM, on_term)
write(started=time.time())
while True:
    time.sleep(0.05)
