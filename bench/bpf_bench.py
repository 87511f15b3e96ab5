#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/bpf_bench.py: the BPF task reader's cost per process and pass against the procfs pattern.

For each case it starts idle process trees with bench/tree, puts the measured tree in a fresh cgroup v2 (when a
writable cgroup2 mount exists), and runs bench/bpf_cost, which times back-to-back passes of each method in
its own process (CPU time: user + system, the BPF program's work included). Cases:

  N = 1, 100, 1000, 5000   one tree of N processes, nothing else added to the machine
  job10-among-5000         a tree of 10 processes (in its cgroup) while a tree of 5000 idle ones runs outside it

Methods (see bench/bpf_cost.c): bpf-task (every process on the machine walked, the tree selected by a PID
filter), bpf-cgroup (only the tree's cgroup walked), procfs (pread of kept-open stat + statm + io), and, up to
N = 1000, stat and schedstat alone (is schedstat cheaper than stat?).

usage: bench/bpf_bench.py [--build-dir build] [-s SAMPLES] [-w WARMUP] [--cases LIST] [--json FILE]
Prints a Markdown table on stdout. Run as root on an otherwise idle machine.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def cgroup2_root():
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, right = line.split(" - ", 1)
        if right.split()[0] == "cgroup2":
            return Path(left.split()[4])
    return None


class Tree:
    def __init__(self, tree_bin, n):
        self.proc = subprocess.Popen([tree_bin, str(n)], stdout=subprocess.PIPE, text=True)
        self.pid = int(self.proc.stdout.readline())
        kids = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text().split()
        self.pids = [self.pid] + [int(k) for k in kids]
        if len(self.pids) != n:
            raise RuntimeError(f"tree {n}: found {len(self.pids)} processes")

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=120)


class Cgroup:
    def __init__(self, name):
        root = cgroup2_root()
        self.path = None
        if root is not None and os.access(root, os.W_OK):
            self.path = root / name
            self.path.mkdir(exist_ok=True)

    def add(self, pids):
        if self.path:
            for pid in pids:
                (self.path / "cgroup.procs").write_text(str(pid))

    def remove(self):
        if self.path:
            for _ in range(100):
                try:
                    self.path.rmdir()
                    return
                except OSError:
                    time.sleep(0.05)


def run_cost(cost_bin, tree, cgroup, methods, samples, warmup):
    cmd = [cost_bin, "-s", str(samples), "-w", str(warmup), "--methods", ",".join(methods), "--tree", str(tree.pid)]
    if cgroup.path and "bpf-cgroup" in methods:
        cmd += ["--cgroup", str(cgroup.path)]
    elif "bpf-cgroup" in methods:
        methods = [m for m in methods if m != "bpf-cgroup"]
        cmd[cmd.index("--methods") + 1] = ",".join(methods)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"bpf_cost failed: {out.stderr}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("-s", type=int, default=50)
    ap.add_argument("-w", type=int, default=5)
    ap.add_argument("--cases", default="1,100,1000,5000,job10-among-5000")
    ap.add_argument("--json")
    a = ap.parse_args()
    build = Path(a.build_dir)
    tree_bin, cost_bin = str(build / "bench" / "tree"), str(build / "bench" / "bpf_cost")
    results = []
    for case in a.cases.split(","):
        others, cg = [], Cgroup(f"jobscope-bpf-bench-{os.getpid()}")
        try:
            if case.startswith("job"):
                others.append(Tree(tree_bin, 5000))
                tree = Tree(tree_bin, 10)
                methods = ["bpf-task", "bpf-cgroup", "procfs"]
            else:
                n = int(case)
                tree = Tree(tree_bin, n)
                methods = ["bpf-task", "bpf-cgroup", "procfs"] + (["stat", "schedstat"] if n <= 1000 else [])
            others.append(tree)
            cg.add(tree.pids)
            procs_on_machine = sum(1 for d in os.listdir("/proc") if d.isdigit())
            for r in run_cost(cost_bin, tree, cg, methods, a.s, a.w):
                r["case"] = case
                r["procs_on_machine"] = procs_on_machine
                results.append(r)
                print(f"# {case}: {r.get('method')} {r.get('cpu_us_per_proc', {}).get('median')} us/proc",
                      file=sys.stderr, flush=True)
        finally:
            for o in others:
                o.stop()
            cg.remove()
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    cases = list(dict.fromkeys(r["case"] for r in results))
    methods = list(dict.fromkeys(r["method"] for r in results if "error" not in r))
    print("| case | processes on the machine | " + " | ".join(methods) + " |")
    print("|---|---|" + "---|" * len(methods))
    for c in cases:
        row = {r["method"]: r for r in results if r["case"] == c}
        on = next(r["procs_on_machine"] for r in results if r["case"] == c)
        cells = []
        for m in methods:
            r = row.get(m)
            if not r or "error" in r:
                cells.append("–")
                continue
            pp, pass_us = r["cpu_us_per_proc"], r["cpu_us"]
            cells.append(f"{pp['median']:.2f} µs/proc ({pass_us['median']:.1f} µs/pass; p10–p90 "
                         f"{pp['p10']:.2f}–{pp['p90']:.2f})")
        print(f"| {c} | {on} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
