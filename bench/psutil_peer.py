#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""psutil peer: one sample as the psutil-based job monitors take it (JUmPER, SKA perfmon).

Per sample: rediscover the tree with root.children(recursive=True); then for the root and every descendant
cpu_percent(), cpu_times(), memory_info(), memory_full_info(), memory_percent(), io_counters(), num_threads(),
num_fds(); then the system-wide psutil.cpu_percent(percpu=True), virtual_memory() and net_io_counters().
Process objects are cached between samples by PID, so that cpu_percent() has a previous reading; the calls
are not grouped in Process.oneshot() unless --oneshot is given (JUmPER calls them one by one). The values are
kept in a dict per sample and discarded; nothing is written.

Samples are taken every --interval seconds on absolute monotonic deadlines (back to back when a sample takes
longer than the interval). The CPU time per sample is time.process_time() (CLOCK_PROCESS_CPUTIME_ID) from the
start of one sample to the start of the next, i.e. the collection plus the wake-up, as with the C floor;
median and spread over --samples samples after --warmup samples; cross-checked with resource.getrusage().
Prints one JSON object on stdout.

usage: psutil_peer.py [--samples S] [--warmup W] [--interval SECONDS] ROOT_PID
"""
import argparse
import contextlib
import json
import resource
import statistics
import sys
import time

import psutil


def quantile(sorted_v, q):
    """Linear-interpolated quantile of an already sorted list (same rule as floor.c)."""
    if not sorted_v:
        return 0.0
    pos = q * (len(sorted_v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    frac = pos - lo
    return sorted_v[lo] * (1 - frac) + sorted_v[hi] * frac


def stats_us(values_s):
    v = sorted(x * 1e6 for x in values_s)
    return {
        "median": quantile(v, 0.5),
        "p10": quantile(v, 0.1),
        "p90": quantile(v, 0.9),
        "min": v[0] if v else 0.0,
        "max": v[-1] if v else 0.0,
        "mean": statistics.fmean(v) if v else 0.0,
    }


def rusage_cpu_s():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def vmhwm_bytes(pid="self"):
    """Peak RSS of the process's own image (VmHWM); ru_maxrss would include the harness's, from before exec."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) * 1024
    except (OSError, StopIteration, ValueError):
        return None


class Peer:
    def __init__(self, root_pid, oneshot):
        self.oneshot = oneshot
        self.root = psutil.Process(root_pid)
        self.cache = {root_pid: self.root}
        self.errors = 0

    def sample(self):
        out = {"procs": {}}
        t0 = time.process_time()
        procs = [self.root] + self.root.children(recursive=True)
        out["discovery_cpu_s"] = time.process_time() - t0
        seen = {}
        for p in procs:
            # Keep one Process object per PID so cpu_percent() measures against the previous sample.
            p = self.cache.get(p.pid, p)
            seen[p.pid] = p
            try:
                with p.oneshot() if self.oneshot else contextlib.nullcontext():
                    out["procs"][p.pid] = (
                        p.cpu_percent(),
                        p.cpu_times(),
                        p.memory_info(),
                        p.memory_full_info(),
                        p.memory_percent(),
                        p.io_counters(),
                        p.num_threads(),
                        p.num_fds(),
                    )
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                self.errors += 1
        self.cache = seen
        out["cpu"] = psutil.cpu_percent(percpu=True)
        out["mem"] = psutil.virtual_memory()
        out["net"] = psutil.net_io_counters()
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", "-s", type=int, default=30)
    ap.add_argument("--warmup", "-w", type=int, default=5)
    ap.add_argument("--interval", "-i", type=float, default=0.1)
    ap.add_argument("--oneshot", action="store_true",
                    help="group the per-process calls in Process.oneshot(), which caches /proc/PID/stat and "
                    "status within a sample (JUmPER does not; default: off)")
    ap.add_argument("root_pid", type=int)
    args = ap.parse_args()

    peer = Peer(args.root_pid, args.oneshot)
    cycle, collect, wall, discovery = [], [], [], []
    nprocs = 0
    deadline = time.monotonic()
    prev_cpu = None
    ru_start = cpu_start = 0.0
    total = args.warmup + args.samples
    for k in range(total + 1):
        c0 = time.process_time()
        if k > args.warmup:
            cycle.append(c0 - prev_cpu)
        prev_cpu = c0
        if k == args.warmup:
            ru_start = rusage_cpu_s()
            cpu_start = c0
        if k == total:
            break
        w0 = time.monotonic()
        out = peer.sample()
        w1 = time.monotonic()
        c1 = time.process_time()
        if k >= args.warmup:
            collect.append(c1 - c0)
            wall.append(w1 - w0)
            discovery.append(out["discovery_cpu_s"])
        nprocs = len(out["procs"])
        deadline += args.interval
        delay = deadline - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        else:
            deadline = time.monotonic()
    cpu_total = time.process_time() - cpu_start
    ru_total = rusage_cpu_s() - ru_start
    result = {
        "tool": "psutil_peer",
        "psutil_version": psutil.__version__,
        "python": sys.version.split()[0],
        "oneshot": args.oneshot,
        "n_procs": nprocs,
        "samples": args.samples,
        "warmup": args.warmup,
        "interval_s": args.interval,
        "errors": peer.errors,
        "cpu_per_sample_us_raw": [round(x * 1e6, 3) for x in cycle],
        "cpu_per_sample_us": stats_us(cycle),
        "collect_cpu_us": stats_us(collect),
        "collect_wall_us": stats_us(wall),
        "discovery_cpu_us": stats_us(discovery),
        "system_processes": len(psutil.pids()),
        "rusage_mean_us": ru_total / args.samples * 1e6,
        "cputime_mean_us": cpu_total / args.samples * 1e6,
        "max_rss_bytes": vmhwm_bytes(),
        "ru_maxrss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
