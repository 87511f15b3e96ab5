#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""pidstat cost: the CPU time pidstat spends per report on a list of PIDs.

Runs `pidstat -h -r -u -d -t -p LIST 1 K` (K = warm-up + samples + 1 reports) with its output drained by a
thread. pidstat writes and flushes each report as a block that starts with a "# Time" header line, once a
second. Half a second after each header arrives (long after pidstat has finished that report and long before
the next one starts) this reads pidstat's cumulative on-CPU time, the first field of /proc/PID/schedstat
(nanoseconds, user + system, exact, where /proc/PID/stat would only give 10 ms ticks). The difference between
two such readings is what one report cost pidstat, wake-up included, as for the other monitors. The first
--warmup differences are dropped (the first also holds pidstat's start-up). The total is cross-checked with the
rusage that wait4() returns when pidstat exits. Prints one JSON object on stdout.

usage: pidstat_cost.py [--samples S] [--warmup W] PID [PID...]
"""
import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time


def quantile(sorted_v, q):
    if not sorted_v:
        return 0.0
    pos = q * (len(sorted_v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] * (1 - (pos - lo)) + sorted_v[hi] * (pos - lo)


def stats_us(values_ns):
    v = sorted(x / 1e3 for x in values_ns)
    return {
        "median": quantile(v, 0.5),
        "p10": quantile(v, 0.1),
        "p90": quantile(v, 0.9),
        "min": v[0] if v else 0.0,
        "max": v[-1] if v else 0.0,
        "mean": statistics.fmean(v) if v else 0.0,
    }


def schedstat_ns(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def vmhwm_bytes(pid):
    """pidstat's own peak RSS (VmHWM); the ru_maxrss of wait4() would include this script's, from before exec."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) * 1024
    except (OSError, StopIteration, ValueError):
        return None


def drain(stream, headers, counts):
    """Reads pidstat's output; puts the arrival time of each report header on `headers`."""
    lines = 0
    for line in stream:
        lines += 1
        if line.startswith("# Time"):
            headers.put(time.monotonic())
    counts["lines"] = lines
    headers.put(None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", "-s", type=int, default=30)
    ap.add_argument("--warmup", "-w", type=int, default=2)
    ap.add_argument("--pidstat", default="pidstat")
    ap.add_argument("pids", type=int, nargs="+")
    args = ap.parse_args()

    reports = args.warmup + args.samples + 1
    cmd = [args.pidstat, "-h", "-r", "-u", "-d", "-t", "-p", ",".join(map(str, args.pids)), "1", str(reports)]
    env = dict(os.environ, LC_ALL="C", S_TIME_FORMAT="ISO")
    t_start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    headers = queue.Queue()
    counts = {}
    reader = threading.Thread(target=drain, args=(proc.stdout, headers, counts), daemon=True)
    reader.start()

    readings = []
    hwm = None
    while True:
        t = headers.get()
        if t is None:
            break
        delay = t + 0.5 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        try:
            readings.append(schedstat_ns(proc.pid))
            hwm = vmhwm_bytes(proc.pid) or hwm
        except (FileNotFoundError, ProcessLookupError):
            break
    _, status, ru = os.wait4(proc.pid, 0)
    reader.join()
    wall = time.monotonic() - t_start

    deltas = [b - a for a, b in zip(readings, readings[1:])]
    kept = deltas[args.warmup:]
    result = {
        "tool": "pidstat",
        "command": " ".join(cmd[:7]) + " LIST 1 " + str(reports),
        "n_procs": len(args.pids),
        "samples": len(kept),
        "warmup": args.warmup,
        "interval_s": 1.0,
        "reports_seen": len(readings),
        "output_lines": counts.get("lines", 0),
        "exit_status": os.waitstatus_to_exitcode(status),
        "cpu_per_sample_us_raw": [round(x / 1e3, 3) for x in kept],
        "cpu_per_sample_us": stats_us(kept),
        "rusage_total_cpu_s": ru.ru_utime + ru.ru_stime,
        "rusage_mean_us": (ru.ru_utime + ru.ru_stime) / reports * 1e6,
        "max_rss_bytes": hwm,
        "ru_maxrss_bytes": ru.ru_maxrss * 1024,
        "wall_s": wall,
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0 if result["exit_status"] == 0 and len(kept) >= 1 else 1


if __name__ == "__main__":
    sys.exit(main())
