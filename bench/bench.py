#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The benchmark driver behind bench/run.sh: measures jobscope against the tools it replaces and writes every
figure into one results file (JSON) that bench/report.py turns into docs/BENCHMARKS.md.

What it measures, and how (docs/BENCHMARKS.md, "Method", says the same for readers):

* CPU time per sample, on idle process trees of N = 1, 10, 100, 1000 processes (bench/tree), for
  jobscope at its default metric set, jobscope with USS/PSS every sample (--uss-every 1), the psutil peer
  (bench/psutil_peer.py), pidstat (bench/pidstat_cost.py) and the C floor (bench/floor); R repetitions of
  S samples after W warm-up samples each. jobscope's figure comes from its own recording: the `self` table
  holds its cumulative getrusage() user and system time at every sample, and the difference between two
  consecutive rows is what one sample cycle cost (collect, write, wake-up). The peer and the floor measure
  themselves the same way (CPU time from the start of one sample to the start of the next); pidstat is
  measured from outside through /proc/PID/schedstat.
  Also jobscope with the BPF backend (--backend bpf; the procfs columns pass --backend procfs) and the
  JUmPER-style C peer (bench/cpeer: open/read/close of four files per process per sample), and, beyond the
  peers' range, N = 5000 and a 10-process job among 5000 idle processes (there also `jobscope run` in a cgroup
  of its own, the BPF cgroup mode).
* The same for a single process holding a 1 GiB touched heap (USS/PSS cost grows with mapped memory).
* jobscope's peak RSS at N = 1000 (summary monitor.max_rss_bytes).
* `jobscope run -q -o FILE -- true` against `true`, wall time, with hyperfine.
* Bytes on disk per stored value after a long run at 10 Hz on a 100-process tree (file size divided by the
  number of non-NULL values in all tables, counted with SQL), and that run's CPU share of one core.
* Sampling jitter: deadline lateness (t_mono_ns - deadline_ns) at 100 Hz on a 100-process tree.
* A flat CPU profile (perf, cpu-clock) of jobscope sampling the 1000-process tree, so that the report can say
  what costs the time.
* The fixed cost's profile: perf with call graphs of jobscope on one process, folded into the parts of a
  sample (SQLite commit, inserts, model, each source, wake-up).
* The BPF reader alone (bench/bpf_bench.py), the cgroup source (bench/cgroup_cost.py), the node sources
  (bench/node_cost) and the Prometheus endpoint (bench/prom_scrape.py), in phase 2.

Scheduling (the full run has to finish in under 15 minutes on 2 vCPUs, and the disk figure alone needs a
10-minute run): phase 1 runs every measurement whose result depends on the rest of the machine being quiet
or on the number of processes on it, one at a time, with only the tree under test alive (psutil rediscovers
the tree by scanning every process on the machine, so an extra tree would inflate its cost). Phase 2 then
starts the 10-minute 10 Hz disk run in the background (it costs a few percent of one core) and, while it
runs, measures pidstat (which only reads the PIDs it is given and is paced by its fixed 1 s interval), the
jitter, the start-up wall time and the profile in the foreground, one at a time.

usage: bench.py [--smoke] --build-dir DIR [--results FILE] [--report FILE] [--workdir DIR] [--keep]
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import goals25  # noqa: E402  (bench/goals25.py: issue 25's goals)
REPO = os.path.dirname(HERE)

FULL = {
    "ns": [1, 10, 100, 1000],
    "reps": 3,
    "warmup": 5,
    "samples": 32,
    "interval_s": 0.05,
    "heap_mib": 1024,
    "pidstat_warmup": 2,
    "pidstat_samples": 30,
    "disk_duration_s": 600,
    "disk_interval_s": 0.1,
    "disk_tree": 100,
    "jitter_duration_s": 30,
    "jitter_interval_s": 0.01,
    "jitter_tree": 100,
    "jitter_warmup": 10,
    "hyperfine_runs": 50,
    "hyperfine_warmup": 5,
    "profile_tree": 1000,
    "profile_duration_s": 6,
    # beyond the peers' range: jobscope (both backends), the C floor and the C peer only
    "big_ns": [5000],
    "job_among": [10, 5000],  # a 10-process job while 5000 idle processes run outside it
    "fixed_tree": 1,          # the fixed cost: N = 1 (its row of the main table), with its profile
    "bpf_reader_cases": "1,100,1000,5000,job10-among-5000",
    "bpf_reader_samples": 50,
    "cgroup_ns": [1, 100, 1000],
    "cgroup_samples": 60,
    "node_n": 1000,
    "prom_ns": [1, 1000],
    # issue 25's goals (bench/goals25.py)
    "goal_reps": 3,
    "goal_big": 1000,
    "goal_attach": [[1000, 8], [100, 6]],
    "goal_hours": 24,
    "goal_before_hours": 2,
    "goal_node_s": 60,        # the goal's run: 60 s at 1 s, start-up included
    "goal_node_reps": 3,      # interleaved with the baseline's, median
}
SMOKE = dict(
    FULL,
    ns=[1, 10],
    reps=1,
    warmup=2,
    samples=5,
    heap_mib=64,
    pidstat_warmup=1,
    pidstat_samples=2,
    disk_duration_s=10,
    disk_tree=10,
    jitter_duration_s=2,
    jitter_tree=10,
    hyperfine_runs=5,
    hyperfine_warmup=1,
    profile_tree=0,
    big_ns=[],
    job_among=None,
    bpf_reader_cases="1",
    bpf_reader_samples=5,
    cgroup_ns=[1],
    cgroup_samples=5,
    node_n=50,
    prom_ns=[],
    goal_reps=1,
    goal_big=300,
    goal_attach=[[10, 1]],
    goal_hours=0.05,
    goal_before_hours=0.02,
    goal_node_s=2,
    goal_node_reps=1,
)

T0 = time.monotonic()


def log(msg):
    sys.stderr.write(f"[bench {time.monotonic() - T0:7.1f}s] {msg}\n")
    sys.stderr.flush()


# ---------------------------------------------------------------------------------------------------- stats


def quantile(sorted_v, q):
    """Linearly interpolated quantile of a sorted list (the rule floor.c and psutil_peer.py use)."""
    if not sorted_v:
        return None
    pos = q * (len(sorted_v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] * (1 - (pos - lo)) + sorted_v[hi] * (pos - lo)


def stats(values):
    v = sorted(values)
    if not v:
        return None
    return {
        "n": len(v),
        "median": quantile(v, 0.5),
        "p10": quantile(v, 0.1),
        "p90": quantile(v, 0.9),
        "p99": quantile(v, 0.99),
        "min": v[0],
        "max": v[-1],
        "mean": statistics.fmean(v),
    }


# ---------------------------------------------------------------------------------------------------- workload


class Tree:
    """An idle process tree of n processes (bench/tree), optionally with a touched heap in the root."""

    def __init__(self, tree_bin, n, heap_mib=0):
        self.n = n
        args = [tree_bin, str(n)] + (["--heap-mib", str(heap_mib)] if heap_mib else [])
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        line = self.proc.stdout.readline()
        if not line.strip():
            self.proc.kill()
            raise RuntimeError(f"tree {n} did not start")
        self.pid = int(line)
        self.proc.stdout.close()

    def pids(self):
        """The tree's PIDs, root first, from the children files (as jobscope and the floor find them)."""
        out, i = [self.pid], 0
        while i < len(out):
            p = out[i]
            with open(f"/proc/{p}/task/{p}/children") as f:
                out += [int(x) for x in f.read().split()]
            i += 1
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def cpu_jiffies():
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]) - idle, sum(v[:8])


def own_cpu_s():
    """CPU time of this driver and every descendant it has reaped (monitors, peers, trees)."""
    import resource

    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def load_mark():
    return cpu_jiffies(), own_cpu_s()


def load_since(mark):
    """How busy the machine was since `mark` (a load_mark()), as shares of all CPUs: everything, and what
    was not the benchmark (busy time minus the CPU time of this driver and its reaped descendants)."""
    (b0, t0), own0 = mark
    b, t = cpu_jiffies()
    if t <= t0:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    busy, total = (b - b0) / hz, (t - t0) / hz
    return {"busy": busy / total, "foreign": max(0.0, busy - (own_cpu_s() - own0)) / total,
            "seconds": total / (os.cpu_count() or 1)}


def count_processes():
    return sum(1 for d in os.listdir("/proc") if d.isdigit())


# ---------------------------------------------------------------------------------------------------- jobscope


def db_query(path, sql, args=()):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        return con.execute(sql, args).fetchall()
    finally:
        con.close()


def db_samples(path):
    try:
        return db_query(path, "SELECT count(*) FROM samples")[0][0]
    except sqlite3.Error:
        return 0


class Jobscope:
    """One `jobscope attach` on a PID, stopped with SIGTERM."""

    def __init__(self, ctx, label, pid, interval_s, extra=(), run=None, binary=None):
        self.db = os.path.join(ctx.workdir, f"{label}.db")
        self.json = os.path.join(ctx.workdir, f"{label}.json")
        self.errlog = os.path.join(ctx.workdir, f"{label}.stderr")
        for p in (self.db, self.db + "-wal", self.db + "-shm", self.json):
            if os.path.exists(p):
                os.unlink(p)
        self.cmd = [binary or ctx.jobscope, "attach" if run is None else "run", "-q", "-i", f"{round(interval_s * 1e3)}ms",
                    "-o", self.db, "--summary-json", self.json, *extra]
        # attach to PID, or `run -- COMMAND` (the run mode puts the command in a cgroup of its own)
        self.cmd += [str(pid)] if run is None else ["--", *run]
        self.t_start = time.monotonic()
        # Started from a small shell as a background job, not straight from this Python process: Linux carries
        # the RSS high-water mark of a process's image before exec() into its ru_maxrss, which jobscope reports
        # as monitor.max_rss_bytes, so a direct child would show this harness's RSS. A background job of a
        # non-interactive shell ignores SIGINT, so it is stopped with SIGTERM (attach treats both alike).
        with open(self.errlog, "w") as err:
            self.shell = subprocess.Popen(["/bin/sh", "-c", '"$@" </dev/null >/dev/null & echo $!; wait $!', "sh",
                                           *self.cmd], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        self.pid = None

    def _pid(self):
        if self.pid is None:
            self.pid = int(self.shell.stdout.readline())
        return self.pid

    def hwm_bytes(self):
        """jobscope's VmHWM now (its own image's peak RSS), or None."""
        try:
            with open(f"/proc/{self._pid()}/status") as f:
                return int(next(l for l in f if l.startswith("VmHWM:")).split()[1]) * 1024
        except (OSError, StopIteration, ValueError):
            return None

    def wait_samples(self, want, interval_s, limit_s):
        """Sleeps until the recording holds `want` samples (checked rarely, read-only, from outside)."""
        deadline = time.monotonic() + limit_s
        time.sleep(want * interval_s + 0.3)
        while db_samples(self.db) < want and time.monotonic() < deadline and self.shell.poll() is None:
            time.sleep(max(interval_s * 4, 0.2))

    def stop(self):
        pid = self._pid()
        if self.shell.poll() is None:
            self.hwm = self.hwm_bytes()
            os.kill(pid, signal.SIGTERM)
        try:
            rc = self.shell.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.kill(pid, signal.SIGKILL)
            rc = self.shell.wait()
        self.shell.stdout.close()
        self.wall_s = time.monotonic() - self.t_start
        self.rc = rc
        with open(self.errlog) as f:
            self.stderr = f.read()[-2000:]
        try:
            with open(self.json) as f:
                self.summary = json.load(f)
        except (OSError, ValueError):
            self.summary = None
        return rc

    def result(self, warmup, samples=None):
        """Per-sample CPU cost from the `self` table plus the recording's own facts."""
        res = {
            "command": " ".join(self.cmd[:2] + [a if not a.startswith("/") else os.path.basename(a)
                                                for a in self.cmd[2:]]),
            "rc": self.rc,
            "wall_s": self.wall_s,
            "stderr_tail": self.stderr,
            "summary_monitor": (self.summary or {}).get("monitor"),
            "vmhwm_bytes_before_stop": getattr(self, "hwm", None),
            "summary_samples": (self.summary or {}).get("samples"),
            "summary_processes": (self.summary or {}).get("processes"),
        }
        try:
            rows = db_query(self.db, "SELECT s.sample, s.final, self.utime_us, self.stime_us, self.rss_bytes, "
                                     "self.maxrss_bytes FROM self JOIN samples s USING (sample) "
                                     "ORDER BY s.sample")
        except sqlite3.Error as e:
            res["error"] = f"cannot read self table: {e}"
            return res
        rows = [r for r in rows if not r[1] and r[2] is not None]
        raw = []
        for a, b in zip(rows, rows[1:]):
            if a[0] < warmup:
                continue
            raw.append(((b[2] + b[3]) - (a[2] + a[3])) / (b[0] - a[0]))
        if samples is not None:
            raw = raw[:samples]
        res["cpu_per_sample_us_raw"] = [round(x, 3) for x in raw]
        res["cpu_per_sample_us"] = stats(raw)
        res["samples_used"] = len(raw)
        try:
            # which backend read the processes (the tree table says, per sample)
            res["backends"] = dict(db_query(self.db, "SELECT coalesce(backend, '?'), count(*) FROM tree WHERE "
                                                     "sample >= ? GROUP BY 1", (warmup,)))
        except sqlite3.Error:
            pass
        try:
            res["missed"] = db_query(self.db, "SELECT coalesce(sum(missed), 0) FROM samples")[0][0]
            srcs = db_query(self.db, "SELECT source, duration_ns FROM source_stats WHERE sample >= ?", (warmup,))
            by = {}
            for name, d in srcs:
                if d is not None:
                    by.setdefault(name, []).append(d / 1e3)
            res["source_wall_us"] = {k: stats(v) for k, v in sorted(by.items())}
            w = db_query(self.db, "SELECT prev_write_ns FROM self WHERE sample > ? AND prev_write_ns IS NOT NULL",
                         (warmup,))
            res["write_wall_us"] = stats([x[0] / 1e3 for x in w])
            res["procs_per_sample"] = db_query(
                self.db, "SELECT avg(c) FROM (SELECT count(*) c FROM proc WHERE sample >= ? GROUP BY sample)",
                (warmup,))[0][0]
        except sqlite3.Error as e:
            res["error"] = f"recording: {e}"
        return res


def jobscope_cpu(ctx, label, pid, extra=(), run=None, binary=None):
    c = ctx.cfg
    want = c["warmup"] + c["samples"] + 2
    js = Jobscope(ctx, label, pid, c["interval_s"], extra, run, binary)
    js.wait_samples(want, c["interval_s"], limit_s=120)
    js.stop()
    res = js.result(c["warmup"], c["samples"])
    if js.rc != 0 or res.get("samples_used", 0) < c["samples"]:
        res["problem"] = f"rc={js.rc}, {res.get('samples_used', 0)} of {c['samples']} samples"
        log(f"  {label}: {res['problem']}: {js.stderr.strip()[-300:]}")
    return res


# ---------------------------------------------------------------------------------------------------- peers


def run_json(cmd, timeout):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    if out.returncode != 0:
        return {"problem": f"exit {out.returncode}: {out.stderr.strip()[-500:]}"}
    return json.loads(out.stdout)


def floor_cpu(ctx, pid):
    c = ctx.cfg
    return run_json([ctx.floor, "-s", str(c["samples"]), "-w", str(c["warmup"]), "-i", str(c["interval_s"]),
                     "--tree", str(pid)], timeout=300)


def cpeer_cpu(ctx, pid):
    c = ctx.cfg
    return run_json([ctx.cpeer, "-s", str(c["samples"]), "-w", str(c["warmup"]), "-i", str(c["interval_s"]),
                     "--tree", str(pid)], timeout=600)


def peer_cpu(ctx, pid):
    c = ctx.cfg
    return run_json([ctx.python, os.path.join(HERE, "psutil_peer.py"), "-s", str(c["samples"]), "-w",
                     str(c["warmup"]), "-i", str(c["interval_s"]), str(pid)], timeout=600)


def pidstat_cpu(ctx, pids):
    c = ctx.cfg
    return run_json([ctx.python, os.path.join(HERE, "pidstat_cost.py"), "-s", str(c["pidstat_samples"]), "-w",
                     str(c["pidstat_warmup"]), *map(str, pids)], timeout=600)


# ---------------------------------------------------------------------------------------------------- figures


def measure_tool(ctx, tool, key, rep, pid):
    """One repetition of one tool on the tree rooted at pid; `key` names the case in labels."""
    if tool == "jobscope_default":
        return jobscope_cpu(ctx, f"cpu-{key}-{rep}-default", pid, ["--backend", "procfs"])
    if tool == "jobscope_bpf":
        return jobscope_cpu(ctx, f"cpu-{key}-{rep}-bpf", pid, ["--backend", "bpf"])
    if tool == "jobscope_baseline":
        return jobscope_cpu(ctx, f"cpu-{key}-{rep}-baseline", pid, ["--backend", "procfs"], binary=ctx.baseline)
    if tool == "jobscope_uss":
        return jobscope_cpu(ctx, f"cpu-{key}-{rep}-uss", pid, ["--uss-every", "1", "--backend", "procfs"])
    if tool == "psutil_peer":
        return peer_cpu(ctx, pid)
    if tool == "cpeer":
        return cpeer_cpu(ctx, pid)
    return floor_cpu(ctx, pid)


def phase1(ctx, res):
    c = ctx.cfg
    tools = ["jobscope_default", "jobscope_bpf", "jobscope_uss", "psutil_peer", "floor", "cpeer"]
    cps = res.setdefault("cpu_per_sample", {})
    res["system_processes_phase1"] = {}
    # the peers that scan the whole machine (psutil) or read files per process (USS) are left out beyond
    # the range (N > 1000): they take seconds per sample there
    big = ["jobscope_default", "jobscope_bpf", "floor", "cpeer"]
    for n in c["ns"] + c["big_ns"]:
        with Tree(ctx.tree, n) as tree:
            res["system_processes_phase1"][str(n)] = count_processes()
            for rep in range(c["reps"]):
                ts = tools if n in c["ns"] else big
                if getattr(ctx, "baseline", None) and n == c["fixed_tree"]:
                    ts = ts + ["jobscope_baseline"]
                order = ts[rep % len(ts):] + ts[:rep % len(ts)]
                for tool in order:
                    if tool == "psutil_peer" and not ctx.have["psutil"]:
                        continue
                    log(f"N={n} rep {rep + 1}/{c['reps']}: {tool}")
                    r = measure_tool(ctx, tool, n, rep, tree.pid)
                    cps.setdefault(tool, {}).setdefault(str(n), []).append(r)
    if c["job_among"]:
        # a small job on a busy node: the job's tree among many idle processes. jobscope attached to the
        # job reads /proc, or walks every task of the node with a PID filter (BPF tasks mode); `run` puts
        # the job in a cgroup of its own and the BPF cgroup mode visits only it.
        job, idle = c["job_among"]
        key = f"job{job}-among-{idle}"
        with Tree(ctx.tree, idle), Tree(ctx.tree, job) as tree:
            res["system_processes_phase1"][key] = count_processes()
            for rep in range(c["reps"]):
                for tool in big + ["jobscope_bpf_cgroup"]:
                    log(f"{key} rep {rep + 1}/{c['reps']}: {tool}")
                    if tool == "jobscope_bpf_cgroup":
                        r = jobscope_cpu(ctx, f"cpu-{key}-{rep}-bpfcg", 0, ["--backend", "bpf", "--cgroup", "auto"],
                                         run=[ctx.tree, str(job)])
                    else:
                        r = measure_tool(ctx, tool, key, rep, tree.pid)
                    cps.setdefault(tool, {}).setdefault(key, []).append(r)

    log(f"heap case: 1 process with {c['heap_mib']} MiB touched heap")
    heap = res.setdefault("heap", {"heap_mib": c["heap_mib"], "tools": {}})
    with Tree(ctx.tree, 1, heap_mib=c["heap_mib"]) as tree:
        with open(f"/proc/{tree.pid}/status") as f:
            heap["root_vmrss_kib"] = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
        for rep in range(c["reps"]):
            for tool in ["jobscope_default", "jobscope_uss", "psutil_peer", "floor"]:
                if tool == "psutil_peer" and not ctx.have["psutil"]:
                    continue
                log(f"heap rep {rep + 1}/{c['reps']}: {tool}")
                if tool == "jobscope_default":
                    r = jobscope_cpu(ctx, f"heap-{rep}-default", tree.pid)
                elif tool == "jobscope_uss":
                    r = jobscope_cpu(ctx, f"heap-{rep}-uss", tree.pid, ["--uss-every", "1"])
                elif tool == "psutil_peer":
                    r = peer_cpu(ctx, tree.pid)
                else:
                    r = floor_cpu(ctx, tree.pid)
                heap["tools"].setdefault(tool, []).append(r)


def start_disk_run(ctx):
    c = ctx.cfg
    tree = Tree(ctx.tree, c["disk_tree"])
    log(f"disk run: {c['disk_duration_s']} s at {1 / c['disk_interval_s']:g} Hz on a {c['disk_tree']}-process "
        f"tree, in the background")
    js = Jobscope(ctx, "disk", tree.pid, c["disk_interval_s"])
    return tree, js


def finish_disk_run(ctx, res, tree, js):
    c = ctx.cfg
    left = c["disk_duration_s"] - (time.monotonic() - js.t_start)
    if left > 0:
        log(f"waiting {left:.0f} s for the disk run to end")
        time.sleep(left)
    js.stop()
    tree.stop()
    out = js.result(c["warmup"])
    out.pop("cpu_per_sample_us_raw", None)
    out.update({"duration_s": c["disk_duration_s"], "interval_s": c["disk_interval_s"], "tree": c["disk_tree"]})
    files = [js.db + s for s in ("", "-wal", "-shm") if os.path.exists(js.db + s)]
    out["files"] = {os.path.basename(f): os.path.getsize(f) for f in files}
    size = sum(os.path.getsize(f) for f in files if not f.endswith("-shm"))
    out["file_bytes"] = size
    try:
        con = sqlite3.connect(f"file:{js.db}?mode=ro", uri=True)
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        per_table = {}
        for t in tables:
            cols = [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')]
            expr = " + ".join(f'count("{col}")' for col in cols)
            rows = con.execute(f'SELECT count(*), {expr} FROM "{t}"').fetchone()
            per_table[t] = {"rows": rows[0], "values": rows[1]}
        out["samples_stored"] = con.execute("SELECT count(*) FROM samples").fetchone()[0]
        out["page_size"] = con.execute("PRAGMA page_size").fetchone()[0]
        out["page_count"] = con.execute("PRAGMA page_count").fetchone()[0]
        out["freelist_count"] = con.execute("PRAGMA freelist_count").fetchone()[0]
        con.close()
        out["tables"] = per_table
        out["values"] = sum(t["values"] for t in per_table.values())
        out["bytes_per_value"] = size / out["values"] if out["values"] else None
        meta = {"meta", "columns"}
        mv = sum(v["values"] for k, v in per_table.items() if k not in meta)
        out["metric_values"] = mv
    except sqlite3.Error as e:
        out["error"] = f"cannot count values: {e}"
    mon = out.get("summary_monitor") or {}
    if js.summary and mon.get("cpu_s") is not None:
        out["cpu_share_of_one_core"] = mon["cpu_s"] / js.summary.get("wall_time_s", js.wall_s)
    # Steady state, start-up excluded: CPU between the first row after warm-up and the last row, over the
    # monotonic time between them.
    try:
        rows = db_query(js.db, "SELECT s.t_mono_ns, self.utime_us + self.stime_us FROM self JOIN samples s "
                               "USING (sample) WHERE s.sample >= ? AND NOT s.final ORDER BY s.sample",
                        (c["warmup"],))
        if len(rows) >= 2:
            out["steady_cpu_share_of_one_core"] = (rows[-1][1] - rows[0][1]) / 1e6 / ((rows[-1][0] - rows[0][0]) / 1e9)
    except sqlite3.Error:
        pass
    res["disk"] = out


def jitter(ctx, res):
    c = ctx.cfg
    log(f"jitter: {c['jitter_duration_s']} s at {1 / c['jitter_interval_s']:g} Hz on a {c['jitter_tree']}-process "
        f"tree")
    with Tree(ctx.tree, c["jitter_tree"]) as tree:
        js = Jobscope(ctx, "jitter", tree.pid, c["jitter_interval_s"])
        time.sleep(c["jitter_duration_s"])
        js.stop()
    out = js.result(c["jitter_warmup"])
    out.pop("cpu_per_sample_us_raw", None)
    rows = db_query(js.db, "SELECT t_mono_ns - deadline_ns, missed FROM samples WHERE sample >= ? AND NOT final "
                           "ORDER BY sample", (c["jitter_warmup"],))
    late = [r[0] / 1e3 for r in rows if r[0] is not None]
    out.update({
        "interval_s": c["jitter_interval_s"],
        "duration_s": c["jitter_duration_s"],
        "tree": c["jitter_tree"],
        "lateness_us": stats(late),
        "samples": len(rows),
        "missed_total": sum(r[1] or 0 for r in rows),
        "samples_with_missed": sum(1 for r in rows if r[1]),
    })
    res["jitter"] = out


def startup(ctx, res):
    c = ctx.cfg
    if not ctx.have["hyperfine"]:
        res["startup"] = {"problem": "hyperfine not installed"}
        return
    log("start-up: hyperfine `jobscope run -q -o FILE -- true` vs `true`")
    db = os.path.join(ctx.workdir, "x.db")
    out = os.path.join(ctx.workdir, "hyperfine.json")
    # A third command puts the recording on tmpfs, where fdatasync() is free: the difference to the first is
    # what the recording's durability costs at start-up and exit.
    shm = "/dev/shm/jobscope-bench-x.db" if os.path.isdir("/dev/shm") else None
    cmds = [f"{ctx.jobscope} run -q -o {db} -- true", "true"]
    names = ["jobscope_run_true", "true"]
    prep = [f"rm -f {db} {db}-wal {db}-shm", "true"]
    if ctx.baseline:  # the older build beside, same file
        cmds.append(f"{ctx.baseline} run -q -o {db} -- true")
        names.append("baseline_run_true")
        prep.append(f"rm -f {db} {db}-wal {db}-shm")
    if shm:
        cmds.append(f"{ctx.jobscope} run -q -o {shm} -- true")
        names.append("jobscope_run_true_tmpfs")
        prep.append(f"rm -f {shm} {shm}-wal {shm}-shm")
    cmd = ["hyperfine", "-N", "--style", "none", "--warmup", str(c["hyperfine_warmup"]), "--runs",
           str(c["hyperfine_runs"]), "--export-json", out]
    for p in prep:
        cmd += ["--prepare", p]
    cmd += cmds
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if shm:
        for s in ("", "-wal", "-shm"):
            if os.path.exists(shm + s):
                os.unlink(shm + s)
    if p.returncode != 0:
        res["startup"] = {"problem": f"hyperfine exit {p.returncode}: {p.stderr[-500:]}"}
        return
    with open(out) as f:
        hf = json.load(f)
    r = {"command": f"hyperfine -N --warmup {c['hyperfine_warmup']} --runs {c['hyperfine_runs']} "
                    f"--prepare 'rm -f x.db*' 'jobscope run -q -o x.db -- true' 'true'",
         "tmpfs_file": shm}
    for name, m in zip(names, hf["results"]):
        r[name] = {k: m.get(k) for k in ("mean", "stddev", "median", "min", "max", "user", "system")}
        r[name]["runs"] = len(m.get("times", []))
    r["added_wall_s_mean"] = r["jobscope_run_true"]["mean"] - r["true"]["mean"]
    r["added_wall_s_median"] = r["jobscope_run_true"]["median"] - r["true"]["median"]
    for k in ("jobscope_run_true", "baseline_run_true"):  # CPU too: wall time is noisy on a shared machine
        if k in r:
            r[k]["added_cpu_s"] = (r[k]["user"] + r[k]["system"]) - (r["true"]["user"] + r["true"]["system"])
    if "baseline_run_true" in r:
        r["baseline_added_wall_s_median"] = r["baseline_run_true"]["median"] - r["true"]["median"]
    if shopt_which("strace"):
        # Where the start-up time goes, by system call (strace inflates every call; read it as shares).
        sc = os.path.join(ctx.workdir, "strace.txt")
        for s in ("", "-wal", "-shm"):
            if os.path.exists(db + s):
                os.unlink(db + s)
        subprocess.run(["strace", "-f", "-c", "-w", "-o", sc, ctx.jobscope, "run", "-q", "-o", db, "--", "true"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        rows = []
        try:
            with open(sc) as f:
                for line in f:
                    parts = line.split()
                    if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                        rows.append({"percent": float(parts[0]), "seconds": float(parts[1]),
                                     "calls": int(parts[3]), "syscall": parts[-1]})
        except OSError:
            pass
        r["strace_top"] = rows[:8]
    res["startup"] = r


def shopt_which(name):
    return shutil.which(name) is not None


def pidstat_phase(ctx, res):
    c = ctx.cfg
    cps = res.setdefault("cpu_per_sample", {})
    if not ctx.have["pidstat"]:
        cps["pidstat"] = {"problem": "pidstat not installed"}
        return
    for n in c["ns"]:
        with Tree(ctx.tree, n) as tree:
            pids = tree.pids()
            for rep in range(c["reps"]):
                log(f"N={n} rep {rep + 1}/{c['reps']}: pidstat ({c['pidstat_warmup'] + c['pidstat_samples'] + 1} s)")
                cps.setdefault("pidstat", {}).setdefault(str(n), []).append(pidstat_cpu(ctx, pids))


def bpf_reader(ctx, res):
    """The BPF task reader alone against the procfs pattern, per process and pass (bench/bpf_bench.py)."""
    c = ctx.cfg
    cost = os.path.join(ctx.build, "bench", "bpf_cost")
    if not os.access(cost, os.X_OK):
        res["bpf_reader"] = {"problem": "bench/bpf_cost not built"}
        return
    log(f"BPF reader: bench/bpf_bench.py, cases {c['bpf_reader_cases']}")
    out = os.path.join(ctx.workdir, "bpf_reader.json")
    p = subprocess.run([ctx.python, os.path.join(HERE, "bpf_bench.py"), "--build-dir", ctx.build, "-s",
                        str(c["bpf_reader_samples"]), "-w", "5", "--cases", c["bpf_reader_cases"], "--json", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=1200)
    if p.returncode != 0 or not os.path.exists(out):
        res["bpf_reader"] = {"problem": f"exit {p.returncode}: {p.stderr.strip()[-500:]}"}
        return
    with open(out) as f:
        res["bpf_reader"] = {"command": f"bench/bpf_bench.py -s {c['bpf_reader_samples']} -w 5 --cases "
                                        f"{c['bpf_reader_cases']}", "results": json.load(f)}


def cgroup_phase(ctx, res):
    """The cgroup source's collect time against proc_tree's at N processes (bench/cgroup_cost.py)."""
    c = ctx.cfg
    log(f"cgroup source: bench/cgroup_cost.py, N = {c['cgroup_ns']}")
    out = os.path.join(ctx.workdir, "cgroup_cost.json")
    ns = ",".join(map(str, c["cgroup_ns"]))
    p = subprocess.run([ctx.python, os.path.join(HERE, "cgroup_cost.py"), "--build-dir", ctx.build, "--ns", ns,
                        "--samples", str(c["cgroup_samples"]), "--json", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=900)
    if p.returncode != 0 or not os.path.exists(out):
        res["cgroup_cost"] = {"problem": f"exit {p.returncode}: {p.stderr.strip()[-500:]}"}
        return
    with open(out) as f:
        res["cgroup_cost"] = {"command": f"bench/cgroup_cost.py --ns {ns} --samples {c['cgroup_samples']}",
                              "results": json.load(f)}


NODE_SOURCES = ["system", "host", "rapl", "infiniband", "cpufreq", "thermal"]


def node_phase(ctx, res):
    """Each node source's collect() run back to back on this machine (bench/node_cost)."""
    c = ctx.cfg
    prog = os.path.join(ctx.build, "bench", "node_cost")
    log(f"node sources: bench/node_cost -n {c['node_n']}")
    p = subprocess.run([prog, "-n", str(c["node_n"]), *NODE_SOURCES], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    rows = []
    for line in p.stdout.splitlines()[1:]:
        parts = line.split()
        if len(parts) == 5 and parts[1][0].isdigit():
            rows.append({"source": parts[0], "wall_us": float(parts[1]), "median_us": float(parts[2]),
                         "cpu_us": float(parts[3]), "rows": int(parts[4])})
        elif parts:
            rows.append({"source": parts[0], "problem": " ".join(parts[1:])})
    res["node_cost"] = {"command": f"bench/node_cost -n {c['node_n']} {' '.join(NODE_SOURCES)}", "rc": p.returncode,
                        "results": rows}


def prom_phase(ctx, res):
    """What the Prometheus endpoint costs: render per sample, scrape per client (bench/prom_scrape.py)."""
    c = ctx.cfg
    if not c["prom_ns"]:
        return
    log(f"Prometheus: bench/prom_scrape.py {' '.join(map(str, c['prom_ns']))}")
    out = os.path.join(ctx.workdir, "prom.json")
    p = subprocess.run([ctx.python, os.path.join(HERE, "prom_scrape.py"), "--build", ctx.build, "--json", out,
                        *map(str, c["prom_ns"])], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=900)
    if p.returncode != 0 or not os.path.exists(out):
        res["prom_scrape"] = {"problem": f"exit {p.returncode}: {p.stderr.strip()[-500:]}"}
        return
    with open(out) as f:
        res["prom_scrape"] = {"command": f"bench/prom_scrape.py {' '.join(map(str, c['prom_ns']))}",
                              "results": json.load(f)}


def fixed_profile(ctx, res):
    """Where the fixed cost of a sample goes: a call-graph profile of jobscope on one process (N = 1) at 100 Hz,
    folded to the monitor's own functions that each part of a sample runs in."""
    c = ctx.cfg
    if not c["profile_tree"] or not ctx.have["perf"]:
        return
    log("fixed-cost profile: perf record -g of jobscope on 1 process at 100 Hz, 8 s")
    data = os.path.join(ctx.workdir, "perf-fixed.data")
    with Tree(ctx.tree, 1) as tree:
        js = Jobscope(ctx, "profile-fixed", tree.pid, 0.01, ["--backend", "procfs"])
        time.sleep(1.0)
        p = subprocess.run(["perf", "record", "-q", "-F", "2999", "-e", "cpu-clock", "--call-graph", "dwarf,32768",
                            "-o", data, "-p", str(js._pid()), "--", "sleep", "8"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        js.stop()
    if p.returncode != 0:
        res["fixed_profile"] = {"problem": f"perf record exit {p.returncode}: {p.stderr[-300:]}"}
        return
    scr = subprocess.run(["perf", "script", "-i", data, "-F", "ip,sym"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    stacks, cur = [], []
    for line in scr.stdout.splitlines():
        line = line.strip()
        if not line:
            if cur:
                stacks.append(cur)
            cur = []
            continue
        parts = line.split(None, 1)
        cur.append(parts[1].replace(" (inlined)", "") if len(parts) > 1 else parts[0])
    if cur:
        stacks.append(cur)
    # each sample goes to the first of these found from the leaf up: the parts of a sample
    parts = [("sqlite3WalFrames", "SQLite: WAL frames written at commit (pwrite)"),
             ("sqlite3WalCheckpoint", "SQLite: checkpoint"),
             ("sqlite3BtreeBeginTrans", "SQLite: begin (locks)"),
             ("recorder_write", "SQLite: rows inserted (VDBE, b-tree)"),
             ("model_feed", "model"),
             ("system_collect", "system source (8 procfs files)"),
             ("tree_collect", "proc_tree source"),
             ("self_collect", "self source"),
             ("sampler_collect", "other sources"),
             ("__poll", "wake-up (poll, timer)"), ("__GI___poll", "wake-up (poll, timer)"),
             ("__timerfd_settime", "wake-up (poll, timer)"),
             ("monitor_loop", "monitor loop, other")]
    counts = {}
    for s in stacks:
        what = "outside the loop"
        for sym, name in parts:
            if sym in s:
                what = name
                break
        counts[what] = counts.get(what, 0) + 1
    total = sum(counts.values()) or 1
    res["fixed_profile"] = {"samples": total, "rate_hz": 100, "duration_s": 8,
                            "parts": sorted(([k, v / total] for k, v in counts.items()), key=lambda x: -x[1])}


def profile(ctx, res):
    c = ctx.cfg
    if not c["profile_tree"] or not ctx.have["perf"]:
        return
    log(f"profile: perf record of jobscope on a {c['profile_tree']}-process tree, {c['profile_duration_s']} s")
    data = os.path.join(ctx.workdir, "perf.data")
    with Tree(ctx.tree, c["profile_tree"]) as tree:
        js = Jobscope(ctx, "profile", tree.pid, c["interval_s"])
        time.sleep(1.0)  # past start-up
        p = subprocess.run(["perf", "record", "-q", "-F", "4999", "-e", "cpu-clock", "-o", data, "-p",
                            str(js._pid()), "--", "sleep", str(c["profile_duration_s"])],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        js.stop()
    if p.returncode != 0:
        res["profile"] = {"problem": f"perf record exit {p.returncode}: {p.stderr[-300:]}"}
        return
    out = {"tree": c["profile_tree"], "interval_s": c["interval_s"], "duration_s": c["profile_duration_s"]}
    for key, sort in (("by_symbol", "dso,symbol"), ("by_dso", "dso")):
        rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--percent-limit", "0.5",
                              "--sort", sort], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        rows = []
        for line in rep.stdout.splitlines():
            line = line.strip()
            if not line or line.startswith("#") or "%" not in line.split()[0]:
                continue
            parts = line.split()
            while parts and parts[-1] == "-":  # the empty IPC columns
                parts.pop()
            rows.append({"percent": float(parts[0].rstrip("%")), "what": " ".join(parts[1:])})
        out[key] = rows[:25]
    res["profile"] = out


# ---------------------------------------------------------------------------------------------------- context


def machine():
    m = {"kernel": platform.release(), "nproc": os.cpu_count()}
    try:
        lscpu = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True, env=dict(os.environ, LC_ALL="C")).stdout
        for line in lscpu.splitlines():
            k, _, v = line.partition(":")
            if k.strip() in ("Model name", "Hypervisor vendor", "Architecture", "Thread(s) per core"):
                m[k.strip().lower().replace(" ", "_").replace("(s)", "s")] = v.strip()
            if k.strip() == "Flags" and "hypervisor" in v.split() and "hypervisor_vendor" not in m:
                m["hypervisor_vendor"] = "unnamed"  # a guest (CPUID's hypervisor bit) whose host gives no vendor
    except OSError:
        pass
    with open("/proc/meminfo") as f:
        m["mem_total_bytes"] = int(next(l for l in f if l.startswith("MemTotal:")).split()[1]) * 1024
    try:
        with open("/etc/os-release") as f:
            m["os"] = next(l.split("=", 1)[1].strip().strip('"') for l in f if l.startswith("PRETTY_NAME="))
    except (OSError, StopIteration):
        pass
    return m


def versions(ctx):
    v = {"python": platform.python_version()}
    try:
        v["jobscope"] = subprocess.run([ctx.jobscope, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    except OSError:
        pass
    for tool, args in (("pidstat", ["-V"]), ("hyperfine", ["--version"])):
        if ctx.have[tool]:
            p = subprocess.run([tool, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            v[tool] = p.stdout.splitlines()[0].strip() if p.stdout else None
    if ctx.have["psutil"]:
        v["psutil"] = subprocess.run([ctx.python, "-c", "import psutil; print(psutil.__version__)"],
                                     stdout=subprocess.PIPE, text=True).stdout.strip()
    try:
        v["git"] = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True).stdout.strip() or None
    except OSError:
        pass
    return v


class Ctx:
    pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="a seconds-long run with N = 1, 10, no targets checked")
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--results", help="results file (default: bench/results/full.json, or "
                                      "BUILD/bench/results-smoke.json with --smoke)")
    ap.add_argument("--report", help="report to write (default: docs/BENCHMARKS.md, or "
                                     "BUILD/bench/BENCHMARKS-smoke.md with --smoke)")
    ap.add_argument("--workdir", help="scratch directory for recordings (default: a new one under $TMPDIR)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--baseline", help="another jobscope binary (an older build) measured beside this one at "
                                       "N = 1, for a before/after of the fixed cost in the same run")
    ap.add_argument("--command", default=None, help="the command line to quote in the report")
    args = ap.parse_args()

    ctx = Ctx()
    ctx.cfg = dict(SMOKE if args.smoke else FULL)
    build = os.path.abspath(args.build_dir)
    ctx.build = build
    ctx.jobscope = os.path.join(build, "jobscope")
    ctx.baseline = os.path.abspath(args.baseline) if args.baseline else None
    ctx.tree = os.path.join(build, "bench", "tree")
    ctx.floor = os.path.join(build, "bench", "floor")
    ctx.cpeer = os.path.join(build, "bench", "cpeer")
    ctx.python = sys.executable
    for p in (ctx.jobscope, ctx.tree, ctx.floor, ctx.cpeer):
        if not os.access(p, os.X_OK):
            sys.exit(f"bench: {p} missing; build first (bench/run.sh does)")
    try:
        import psutil  # noqa: F401

        have_psutil = True
    except ImportError:
        have_psutil = False
    ctx.have = {"psutil": have_psutil, "pidstat": shutil.which("pidstat") is not None,
                "hyperfine": shutil.which("hyperfine") is not None, "perf": shutil.which("perf") is not None}
    missing = [k for k, v in ctx.have.items() if not v and k != "perf"]
    if missing and not args.smoke:
        sys.exit(f"bench: missing {', '.join(missing)} (apt-get install python3-psutil sysstat hyperfine)")
    for k in missing:
        log(f"{k} not found: its figures are skipped")

    mode = "smoke" if args.smoke else "full"
    results = args.results or (os.path.join(build, "bench", "results-smoke.json") if args.smoke
                               else os.path.join(HERE, "results", "full.json"))
    report = args.report or (os.path.join(build, "bench", "BENCHMARKS-smoke.md") if args.smoke
                             else os.path.join(REPO, "docs", "BENCHMARKS.md"))
    ctx.workdir = args.workdir or tempfile.mkdtemp(prefix="jobscope-bench.")
    os.makedirs(ctx.workdir, exist_ok=True)

    res = {
        "mode": mode,
        "command": args.command or ("bench/run.sh --smoke" if args.smoke else "bench/run.sh"),
        "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "versions": versions(ctx),
        "baseline": None if not ctx.baseline else {
            "binary": os.path.basename(ctx.baseline),
            "version": subprocess.run([ctx.baseline, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()},
        "config": ctx.cfg,
        "workdir_fs": subprocess.run(["stat", "-f", "-c", "%T", ctx.workdir], stdout=subprocess.PIPE,
                                     text=True).stdout.strip(),
        "system_processes_at_start": count_processes(),
    }
    log(f"{mode} run, scratch {ctx.workdir}")
    disk = None
    # How busy the machine was in each phase, and how much of that was not the benchmark: a warning when
    # something else ran.
    res["machine_load"] = {}
    try:
        j = load_mark()
        phase1(ctx, res)
        res["machine_load"]["phase1"] = load_since(j)
        j = load_mark()
        goals25.measure(ctx, res, Tree, jobscope_cpu, log)
        res["machine_load"]["goals"] = load_since(j)
        j = load_mark()
        disk = start_disk_run(ctx)
        pidstat_phase(ctx, res)
        jitter(ctx, res)
        startup(ctx, res)
        profile(ctx, res)
        # the added measurements: one that fails (a timeout, a missing tool) is recorded, not fatal
        for key, fn in (("fixed_profile", fixed_profile), ("bpf_reader", bpf_reader), ("cgroup_cost", cgroup_phase),
                        ("node_cost", node_phase), ("prom_scrape", prom_phase)):
            try:
                fn(ctx, res)
            except Exception as e:  # noqa: BLE001 -- any failure of one measurement
                log(f"{key} failed: {e!r}")
                res[key] = {"problem": repr(e)[-500:]}
        finish_disk_run(ctx, res, *disk)
        res["machine_load"]["phase2"] = load_since(j)
        disk = None
    finally:
        if disk:
            disk[1].stop()
            disk[0].stop()
    res["duration_s"] = time.monotonic() - T0
    res["finished_utc"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    os.makedirs(os.path.dirname(os.path.abspath(results)), exist_ok=True)
    with open(results, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    log(f"results: {results}")
    if not args.keep and not args.workdir:
        shutil.rmtree(ctx.workdir, ignore_errors=True)
    rc = subprocess.run([ctx.python, os.path.join(HERE, "report.py"), results, "-o", report]).returncode
    log(f"report: {report}" if rc == 0 else "report.py failed")
    return rc


if __name__ == "__main__":
    sys.exit(main())
