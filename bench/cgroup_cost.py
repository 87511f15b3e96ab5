#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Cost per sample of the cgroup totals against the tree accounting, at N = 1, 100 and 1000 processes.

`jobscope run --cgroup auto` starts bench/tree N (N processes sitting in pause()) in a cgroup of its own and
samples it every INTERVAL; the recording's source_stats table holds every source's collect() wall time per
sample. The figure is the median (and p90) over the samples after the warm-up, for the `cgroup` source
(one pread per cgroup file: must not grow with N) and for `proc_tree` (a few files per process: grows with
N). Needs root (or a delegated cgroup) for the cgroup to exist; prints a table and, with --json FILE, writes
the figures. bench/run.sh runs it (bench.py, phase 2).

usage: bench/cgroup_cost.py [--build-dir build] [--ns 1,100,1000] [--samples 60] [--interval 0.05] [--json F]
"""
import argparse
import json
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
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def measure(build, n, samples, interval, warmup=5):
    js = os.path.join(build, "jobscope")
    tree = os.path.join(build, "bench", "tree")
    with tempfile.TemporaryDirectory(prefix="jobscope-cgcost-") as tmp:
        db = os.path.join(tmp, "r.db")
        p = subprocess.Popen([js, "run", "-q", "--cgroup", "auto", "-i", str(interval), "-o", db, "--uss-every", "0",
                              "--", tree, str(n)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        want = warmup + samples
        deadline = time.monotonic() + 60 + want * interval * 4
        while time.monotonic() < deadline:
            time.sleep(max(interval * 5, 0.2))
            try:
                with sqlite3.connect(db) as c:
                    got = c.execute("select count(*) from samples").fetchone()[0]
            except sqlite3.Error:
                got = 0
            if got >= want:
                break
        p.send_signal(signal.SIGTERM)  # forwarded to tree, which ends its children and exits
        _, err = p.communicate(timeout=60)
        with sqlite3.connect(db) as c:
            rows = c.execute("select source, duration_ns from source_stats where sample >= ? and sample < ?",
                             (warmup, want)).fetchall()
            version = c.execute("select value from meta where key = 'cgroup_version'").fetchone()
            members = c.execute("select max(members) from tree").fetchone()[0]
    out = {"n": n, "members": members, "cgroup_version": version[0] if version else None, "stderr": err.strip()}
    for src in ("cgroup", "proc_tree"):
        d = [r[1] / 1000.0 for r in rows if r[0] == src]
        out[src] = {"samples": len(d), "median_us": statistics.median(d) if d else None,
                    "p90_us": quantile(d, 0.9) if d else None}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--ns", default="1,100,1000")
    ap.add_argument("--samples", type=int, default=60)
    ap.add_argument("--interval", type=float, default=0.05)
    ap.add_argument("--json")
    a = ap.parse_args()
    res = [measure(a.build_dir, int(n), a.samples, a.interval) for n in a.ns.split(",")]
    print(f"{'N':>6} {'members':>8} {'cgroup median us':>17} {'p90':>8} {'proc_tree median us':>20} {'p90':>9}")
    for r in res:
        cg, pt = r["cgroup"], r["proc_tree"]
        f = lambda x: "n/a" if x is None else f"{x:.1f}"
        print(f"{r['n']:>6} {r['members'] or 0:>8} {f(cg['median_us']):>17} {f(cg['p90_us']):>8} "
              f"{f(pt['median_us']):>20} {f(pt['p90_us']):>9}")
        if r["stderr"]:
            print(f"       stderr: {r['stderr']}", file=sys.stderr)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(res, fh, indent=1)


if __name__ == "__main__":
    main()
