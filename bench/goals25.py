# SPDX-License-Identifier: MIT
"""The goals of issue 25 (performance with start-up counted), measured by bench/bench.py in one run, for this
build and, with --baseline, an older one side by side (interleaved repetitions, medians):

* one BPF load: CPU time of opening the BPF task reader (bench/bpf_cost's open_cpu_us; the baseline's own
  bench/bpf_cost next to its binary when there is one), and how many loads a run made (the inventory);
* attach with start-up counted: the whole CPU time (wait4 rusage) of `jobscope attach -i 100ms --duration T`
  (backend auto: the BPF reader is loaded when it pays) against the psutil peer sampling as long at the same
  interval, its interpreter's start-up included: 8 s at 1000 processes, 6 s at 100;
* the whole sample with the BPF backend per process, in run mode at N processes (the attach figure is in the
  main table);
* reading a long recording: bench/synth_recording's 24 h x 1000 processes (a task farm: 16 busy at a time on
  8 CPUs), its size and the time of `summary`, `report`, `export`; the baseline reads the same workload's
  first 2 h written the way it wrote recordings (schema 1: every process row; made from this build's file
  with SQL), scaled by 12, and this build reads those 2 h too;
* `watch --node` at 1 s: share of one core, against pytyche's kind of sampler (Python reading /proc/stat once
  a second).
The N = 1 fixed cost, the start-up of `run -- true` and the BPF whole sample at attach are in bench.py's own
measurements (the baseline beside where given).
"""
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_cpu(cmd, timeout, stdout=subprocess.DEVNULL, env=None):
    """Run `cmd` to its end: (its user + system CPU seconds from wait4, its wall seconds, stdout text)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    deadline = t0 + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            p.kill()
            pid, status, ru = os.wait4(p.pid, 0)
            break
        time.sleep(0.01)
    wall = time.monotonic() - t0
    out = p.stdout.read().decode(errors="replace") if p.stdout else ""
    err = p.stderr.read().decode(errors="replace")
    p.returncode = os.waitstatus_to_exitcode(status)
    return {"cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": wall, "rc": p.returncode, "stdout": out,
            "stderr": err[-400:]}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def baseline_tool(ctx, name):
    """The baseline build's bench helper `name` next to its binary (BASE/bench/NAME), or None."""
    if not ctx.baseline:
        return None
    p = os.path.join(os.path.dirname(ctx.baseline), "bench", name)
    return p if os.access(p, os.X_OK) else None


def inventory_last(db, key):
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        row = con.execute("SELECT value FROM inventory WHERE source = 'proc_tree' AND key = ? ORDER BY sample DESC, "
                          "rowid DESC LIMIT 1", (key,)).fetchone()
        con.close()
        return row[0] if row else None
    except sqlite3.Error:
        return None


def bpf_load(ctx, cfg, Tree, log):
    out = {"this": [], "baseline": []}
    builds = [("this", os.path.join(ctx.build, "bench", "bpf_cost"))]
    b = baseline_tool(ctx, "bpf_cost")
    if b:
        builds.append(("baseline", b))
    with Tree(ctx.tree, 1) as tree:
        for rep in range(cfg["goal_reps"]):
            for name, tool in builds:
                if not os.access(tool, os.X_OK):
                    continue
                r = run_cpu([tool, "-s", "2", "-w", "0", "--methods", "bpf-task", str(tree.pid)], 120,
                            stdout=subprocess.PIPE)
                try:
                    line = json.loads(r["stdout"].splitlines()[0])
                except (ValueError, IndexError):
                    line = {}
                if "open_cpu_us" in line:
                    out[name].append(line["open_cpu_us"] / 1e3)
                elif line.get("error"):
                    out.setdefault("problem", line["error"])
    out = {k: v for k, v in out.items() if v or k == "problem"}
    # loads per run, with a tree larger than the first array (256 records), on this build
    with Tree(ctx.tree, cfg["goal_big"]) as tree:
        db = os.path.join(ctx.workdir, "goal-loads.db")
        for s in ("", "-wal", "-shm"):
            if os.path.exists(db + s):
                os.unlink(db + s)
        run_cpu([ctx.jobscope, "attach", "-q", "--backend", "bpf", "-i", "100ms", "--duration", "1s", "-o", db,
                 str(tree.pid)], 120)
        out["inventory"] = inventory_last(db, "backend.bpf")
    log(f"  BPF load: {out}")
    return out


def attach_vs_peer(ctx, cfg, Tree, log):
    out = {}
    for n, secs in cfg["goal_attach"]:
        rows = {"this": [], "baseline": [], "peer": []}
        backend = {"this": None, "baseline": None}
        with Tree(ctx.tree, n) as tree:
            for rep in range(cfg["goal_reps"]):
                for who in ["this", "baseline", "peer"]:
                    if who == "baseline" and not ctx.baseline:
                        continue
                    if who == "peer" and not ctx.have["psutil"]:
                        continue
                    if who == "peer":
                        cmd = [ctx.python, os.path.join(HERE, "psutil_peer.py"), "-s", str(int(secs / 0.1)), "-w",
                               "0", "-i", "0.1", str(tree.pid)]
                    else:
                        db = os.path.join(ctx.workdir, f"goal-attach-{n}-{who}-{rep}.db")
                        cmd = [ctx.jobscope if who == "this" else ctx.baseline, "attach", "-q", "-i", "100ms",
                               "--duration", f"{secs:g}s", "-o", db, str(tree.pid)]
                    r = run_cpu(cmd, secs + 120)
                    if r["rc"] != 0:
                        rows.setdefault("problems", []).append(f"{who}: rc {r['rc']}: {r['stderr'][-200:]}")
                        continue
                    rows[who].append(r["cpu_s"])
                    if who != "peer":
                        try:
                            con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                            backend[who] = dict(con.execute("SELECT backend, count(*) FROM tree GROUP BY 1"))
                            con.close()
                        except sqlite3.Error:
                            pass
        out[str(n)] = {"seconds": secs, "cpu_s": rows, "backends": backend,
                       "median_cpu_s": {k: med(v) for k, v in rows.items() if isinstance(v, list)}}
        log(f"  attach {n} for {secs} s: {out[str(n)]['median_cpu_s']}")
    return out


def run_bpf(ctx, cfg, Tree, log, jobscope_cpu):
    """The whole sample with the BPF backend at N = goal_big processes, CPU per sample (the monitor's `self`
    table, after the warm-up: the load is not in it), attach and run mode, this build and the baseline."""
    n = cfg["goal_big"]
    out = {"n": n}
    builds = [("this", None)] + ([("baseline", ctx.baseline)] if ctx.baseline else [])
    for mode in ("attach", "run"):
        vals = {who: [] for who, _ in builds}
        backends = {}
        with Tree(ctx.tree, n) if mode == "attach" else _Null() as tree:
            for rep in range(cfg["goal_reps"]):
                for who, binary in builds:
                    label = f"goal-{mode}-bpf-{who}-{rep}"
                    if mode == "attach":
                        r = jobscope_cpu(ctx, label, tree.pid, ["--backend", "bpf"], binary=binary)
                    else:
                        r = jobscope_cpu(ctx, label, 0, ["--backend", "bpf"], run=[ctx.tree, str(n)], binary=binary)
                    if r.get("cpu_per_sample_us"):
                        vals[who].append(r["cpu_per_sample_us"]["median"])
                    backends[who] = r.get("backends")
        out[mode] = {who: {"us_per_sample": med(v), "us_per_process": med(v) / n if v else None, "reps": v}
                     for who, v in vals.items()}
        out[mode]["backends"] = backends
        log(f"  {mode}, BPF, N = {n}: " + ", ".join(f"{who} {x['us_per_process']} us per process" for who, x in
                                                    out[mode].items() if who != "backends"))
    return out


class _Null:
    pid = 0

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def long_recording(ctx, cfg, log):
    synth = os.path.join(ctx.build, "bench", "synth_recording")
    out = {"hours": cfg["goal_hours"], "procs": 1000}
    if not os.access(synth, os.X_OK):
        return {"problem": "bench/synth_recording not built"}
    rec = os.path.join(ctx.workdir, "goal-long.db")
    for s in ("", "-wal", "-shm"):
        if os.path.exists(rec + s):
            os.unlink(rec + s)
    r = run_cpu([synth, rec, str(cfg["goal_hours"]), "1", "0", "1000"], 3600, stdout=subprocess.PIPE)
    out["write"] = {"cpu_s": r["cpu_s"], "wall_s": r["wall_s"]}
    out["bytes"] = os.path.getsize(rec)
    con = sqlite3.connect(f"file:{rec}?mode=ro", uri=True)
    out["samples"] = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    out["proc_rows_stored"] = con.execute("SELECT count(*) FROM proc_changes").fetchone()[0]
    con.close()

    def reads(binary, path):
        res = {}
        for name, args in (("summary", ["summary"]), ("report", ["report", "--force", "-o", path + ".html"]),
                           ("export", ["export", "-f", "csv", "--force", "-o", path + ".csv"])):
            x = run_cpu([binary, *args, path], 3600)
            res[name] = {"cpu_s": x["cpu_s"], "wall_s": x["wall_s"], "rc": x["rc"]}
        return res

    out["this"] = reads(ctx.jobscope, rec)
    log(f"  long recording {cfg['goal_hours']} h: {out['bytes']} B, {out['this']}")
    # the baseline: the first hours of the same workload, as the baseline wrote recordings (schema 1)
    short_h = cfg["goal_before_hours"]
    short = os.path.join(ctx.workdir, "goal-short.db")
    v1 = os.path.join(ctx.workdir, "goal-short-v1.db")
    for p in (short, v1):
        for s in ("", "-wal", "-shm"):
            if os.path.exists(p + s):
                os.unlink(p + s)
    run_cpu([synth, short, str(short_h), "1", "0", "1000"], 3600)
    out["short"] = {"hours": short_h, "this": reads(ctx.jobscope, short), "bytes": os.path.getsize(short)}
    if ctx.baseline:
        shutil.copy(short, v1)
        con = sqlite3.connect(v1)
        con.executescript("PRAGMA journal_mode=DELETE; PRAGMA synchronous=OFF;"
                          "CREATE TABLE proc_full AS SELECT * FROM proc ORDER BY sample;"
                          "DROP VIEW proc; ALTER TABLE proc_full RENAME TO proc; DROP TABLE proc_changes;"
                          "DROP TABLE IF EXISTS proc_gone; DROP TABLE IF EXISTS tree_totals;"
                          "DROP TABLE IF EXISTS summary_state; UPDATE meta SET value = '1' WHERE key = "
                          "'schema_version'")
        con.commit()
        con.execute("VACUUM")
        con.close()
        out["short"]["v1_bytes"] = os.path.getsize(v1)
        out["short"]["baseline"] = reads(ctx.baseline, v1)
        out["short"]["this_v1"] = reads(ctx.jobscope, v1)
        log(f"  {short_h} h, schema 1: {out['short']['v1_bytes']} B, baseline {out['short']['baseline']}")
    return out


PYTYCHE = r"""
import sys, time
end = time.monotonic() + float(sys.argv[1])
prev = None
while time.monotonic() < end:
    with open("/proc/stat") as f:
        cpu = [int(x) for x in f.readline().split()[1:]]
    if prev:
        busy = sum(cpu) - cpu[3] - cpu[4] - (sum(prev) - prev[3] - prev[4])
    prev = cpu
    time.sleep(1.0)
"""


def watch_node_once(binary, db, secs):
    """One `jobscope watch --node -q -i 1s --duration SECS`: its whole CPU from wait4 (start-up and close
    included) over its wall time, and the steady share (the self table's CPU from the third sample to the last
    before the closing one, per second of that span)."""
    for s in ("", "-wal", "-shm"):
        if os.path.exists(db + s):
            os.unlink(db + s)
    r = run_cpu([binary, "watch", "--node", "-q", "-i", "1s", "--duration", f"{secs}s", "-o", db], secs + 120)
    steady = None
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = con.execute("SELECT s.t_mono_ns, self.utime_us + self.stime_us FROM self JOIN samples s USING "
                           "(sample) WHERE s.sample >= 2 AND NOT s.final ORDER BY s.sample").fetchall()
        con.close()
        if len(rows) >= 2:
            steady = (rows[-1][1] - rows[0][1]) / 1e6 / ((rows[-1][0] - rows[0][0]) / 1e9)
    except sqlite3.Error:
        pass
    return {"cpu_s": r["cpu_s"], "wall_s": r["wall_s"], "share": r["cpu_s"] / r["wall_s"], "steady_share": steady,
            "rc": r["rc"]}


def watch_node(ctx, cfg, log):
    """The goal's figure: `watch --node` at 1 s for goal_node_s (60 s), the whole run's CPU (start-up and close
    included: wait4) over its wall time, median of goal_node_reps runs interleaved with the baseline's (one
    run moves by 10-20% on a shared machine); the steady share (no start-up) beside."""
    secs = cfg["goal_node_s"]
    reps = max(1, int(cfg.get("goal_node_reps", 1)))
    out = {"seconds": secs, "reps": reps}
    runs = {}
    for _ in range(reps):
        for who, binary in (("this", ctx.jobscope), ("baseline", ctx.baseline)):
            if binary:
                db = os.path.join(ctx.workdir, f"goal-node-{who}.db")
                runs.setdefault(who, []).append(watch_node_once(binary, db, secs))
    for who, rs in runs.items():
        out[who] = {"cpu_s": med(x["cpu_s"] for x in rs), "wall_s": med(x["wall_s"] for x in rs),
                    "share": med(x["share"] for x in rs), "steady_share": med(x["steady_share"] for x in rs),
                    "runs": rs}
    r = run_cpu([ctx.python, "-c", PYTYCHE, str(secs)], secs + 60)
    out["pytyche"] = {"cpu_s": r["cpu_s"], "wall_s": r["wall_s"], "share": r["cpu_s"] / r["wall_s"]}
    log(f"  watch --node at 1 s for {secs} s: {out}")
    return out


def measure(ctx, res, Tree, jobscope_cpu, log):
    """Every goal above into res["goals25"]; a measurement that fails is recorded, not fatal."""
    cfg = ctx.cfg
    g = res.setdefault("goals25", {})
    # the tasks-mode BPF reader (attach without a cgroup of the tree's own) walks every process on the machine
    g["machine_processes"] = sum(1 for d in os.listdir("/proc") if d.isdigit())
    for key, fn in (("bpf_load", lambda: bpf_load(ctx, cfg, Tree, log)),
                    ("attach", lambda: attach_vs_peer(ctx, cfg, Tree, log)),
                    ("run_bpf", lambda: run_bpf(ctx, cfg, Tree, log, jobscope_cpu)),
                    ("watch_node", lambda: watch_node(ctx, cfg, log)),
                    ("long_recording", lambda: long_recording(ctx, cfg, log))):
        log(f"issue 25 goal: {key}")
        try:
            g[key] = fn()
        except Exception as e:  # noqa: BLE001 -- one goal's failure is recorded
            log(f"  {key} failed: {e!r}")
            g[key] = {"problem": repr(e)[-400:]}
