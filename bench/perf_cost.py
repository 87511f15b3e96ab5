#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What the perf source adds to one sample: the wall time of its collect() (source_stats.duration_ns, one
read() per counter group and target), next to that of the other sources, for idle process trees of N
processes (bench/tree) watched two ways:

* run:    `jobscope run -- tree N`: one inherited counter group on the command; a read() sums the counts of
          every live descendant's inherited copy, so its cost grows with the live tree;
* attach: `jobscope attach PID`: one counter group per task of the tree (N groups read per sample).

usage: perf_cost.py --build-dir DIR [--ns 1,10,100,1000] [--samples S] [--interval 50ms]
Prints one Markdown table (medians and 90th percentiles over the samples after the first). Run it on a quiet
machine: the figures are wall times.
"""
import argparse
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time


def quantile(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))] if v else float("nan")


def durations(db):
    """Per sample (the first left out: it opens the counters in attach mode): perf's duration and the sum of
    every other source's, in microseconds."""
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT sample, source, duration_ns FROM source_stats WHERE sample > 0").fetchall()
        groups = c.execute("SELECT COUNT(*) FROM perf WHERE sample = (SELECT MAX(sample) FROM perf)").fetchone()[0]
    perf, other = {}, {}
    for s, src, d in rows:
        if src == "perf":
            perf[s] = d / 1e3
        else:
            other[s] = other.get(s, 0) + d / 1e3
    return [perf[s] for s in sorted(perf)], [other[s] for s in sorted(other)], groups


def start_tree(tree_bin, n):
    p = subprocess.Popen([tree_bin, str(n)], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    line = p.stdout.readline()
    if not line:
        raise RuntimeError(f"tree {n} did not start")
    return p, int(line)


def measure_run(js, tree_bin, n, samples, interval, work):
    db = os.path.join(work, f"run{n}.db")
    p = subprocess.Popen([js, "run", "-q", "-i", interval, "-o", db, "--force", "--", tree_bin, str(n)],
                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    p.stdout.readline()  # the tree is up
    time.sleep(samples * parse_interval(interval))
    p.send_signal(signal.SIGTERM)  # forwarded to the tree, which then ends
    p.wait(timeout=60)
    return durations(db)


def measure_attach(js, tree_bin, n, samples, interval, work):
    db = os.path.join(work, f"attach{n}.db")
    tree, pid = start_tree(tree_bin, n)
    try:
        m = subprocess.Popen([js, "attach", "-q", "-i", interval, "-o", db, "--force", str(pid)],
                             stdin=subprocess.DEVNULL)
        time.sleep(samples * parse_interval(interval) + 0.5)
        m.send_signal(signal.SIGINT)
        m.wait(timeout=60)
    finally:
        tree.send_signal(signal.SIGTERM)
        tree.wait(timeout=60)
    return durations(db)


def parse_interval(s):
    for suffix, f in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0)):
        if s.endswith(suffix):
            return float(s[: -len(suffix)]) * f
    return float(s)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--ns", default="1,10,100,1000")
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--interval", default="50ms")
    a = ap.parse_args()
    js = os.path.join(a.build_dir, "jobscope")
    tree_bin = os.path.join(a.build_dir, "bench", "tree")
    for b in (js, tree_bin):
        if not os.access(b, os.X_OK):
            sys.exit(f"perf_cost.py: {b} not built (meson setup {a.build_dir} && ninja -C {a.build_dir})")
    print("| mode | N | perf rows per sample | perf collect, median (p90) | other sources, median (p90) |")
    print("|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="jobscope-perf-cost-") as work:
        for mode, fn in (("run", measure_run), ("attach", measure_attach)):
            for n in (int(x) for x in a.ns.split(",")):
                perf, other, rows = fn(js, tree_bin, n, a.samples, a.interval, work)
                print(f"| {mode} | {n} | {rows} | {statistics.median(perf):.1f} µs ({quantile(perf, 0.9):.1f}) | "
                      f"{statistics.median(other):.1f} µs ({quantile(other, 0.9):.1f}) |", flush=True)


if __name__ == "__main__":
    main()
