#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes docs/BENCHMARKS.md from one results file of bench/bench.py (bench/run.sh).

Every number in the report is computed here from that file; the only constants are the targets, quoted from
the benchmark issue. Statistics over samples pool the samples of all repetitions of a figure; the spread shown
is the 10th to 90th percentile of the pooled samples, and the range of the repetitions' own medians.

usage: report.py RESULTS.json [-o REPORT.md]
"""
import argparse
import json
import statistics
import sys

# Targets from the benchmark issue (issue 3). Ratios are "times cheaper than" (peer / jobscope).
TARGETS = {
    "per_process_us": 20.0,        # jobscope default set, per process per sample
    "peer_ratio_n1": 30.0,         # psutil peer / jobscope at N = 1
    "peer_ratio_large": 15.0,      # psutil peer / jobscope at N = 100 and 1000
    "floor_ratio": 1.2,            # jobscope / C floor
    "tenhz_share": 0.03,           # 10 Hz on a 100-process tree, share of one core
    "rss_bytes_n1000": 8 << 20,    # monitor RSS at N = 1000
    "startup_added_s": 0.010,      # `jobscope run -- true` minus `true`, wall
    "bytes_per_value": 64.0,       # bytes on disk per metric-sample
}
# Targets of the fast-path issue (issue 14), all on this machine kind, in one run.
FAST = {
    "bpf_per_process_us": 1.0,     # BPF backend, per process per sample, N = 1000
    "peer_ratio_n1000": 100.0,     # psutil peer / jobscope at N = 1000
    "cpeer_ratio": 1.0,            # C peer / jobscope at every N: jobscope cheaper
    "fixed_us": 300.0,             # jobscope CPU per sample at N = 1
    "cgroup_flat": 2.0,            # cgroup source: collect at N = 1000 within 2x of N = 1
}

# Goals of the performance issue (issue 25): start-up counted, one run, before (--baseline) and after.
G25 = {
    "bpf_load_ms": 60.0,           # one BPF load, CPU
    "bpf_per_process_us": 2.0,     # whole sample with BPF per process at N = 1000 (attach and run)
    "attach_peer_1000": 50.0,      # psutil peer / jobscope, 8 s attach to 1000, start-up included
    "attach_peer_100": 10.0,       # the same, 6 s attach to 100
    "fixed_floor_ratio": 1.6,      # jobscope / C floor (and C peer) at N = 1, default set
    "summary_s": 5.0,              # 24 h x 1000-process recording
    "report_s": 15.0,
    "size_bytes": 300e6,
    "startup_added_s": 0.005,      # run -- true, added wall
    "node_share": 0.0005,          # watch --node at 1 s, share of one core
}

# Above this share of all CPUs used by processes that are not the benchmark, the report warns.
FOREIGN_WARN = 0.05

TOOLS = [
    ("jobscope_default", "jobscope (default set, procfs)"),
    ("jobscope_bpf", "jobscope (BPF backend)"),
    ("jobscope_uss", "jobscope (USS/PSS every sample)"),
    ("psutil_peer", "psutil peer"),
    ("pidstat", "pidstat"),
    ("cpeer", "C peer (open/read/close)"),
    ("floor", "C floor"),
]
# beyond the peers' range (N > 1000, and a small job among many idle processes)
BIG_TOOLS = [
    ("jobscope_default", "jobscope (procfs)"),
    ("jobscope_bpf", "jobscope (BPF, attach: tasks mode)"),
    ("jobscope_bpf_cgroup", "jobscope (BPF, run in a cgroup: cgroup mode)"),
    ("cpeer", "C peer (open/read/close)"),
    ("floor", "C floor"),
]


def quantile(sorted_v, q):
    if not sorted_v:
        return None
    pos = q * (len(sorted_v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] * (1 - (pos - lo)) + sorted_v[hi] * (pos - lo)


class Fig:
    """Pooled per-sample CPU figures (µs) of one tool at one N."""

    def __init__(self, reps):
        self.reps = [r for r in reps if isinstance(r, dict) and r.get("cpu_per_sample_us_raw")]
        self.problems = [r.get("problem") for r in reps if isinstance(r, dict) and r.get("problem")]
        raw = sorted(x for r in self.reps for x in r["cpu_per_sample_us_raw"])
        self.n = len(raw)
        self.median = quantile(raw, 0.5)
        self.p10 = quantile(raw, 0.1)
        self.p90 = quantile(raw, 0.9)
        rep_medians = [quantile(sorted(r["cpu_per_sample_us_raw"]), 0.5) for r in self.reps]
        self.rep_min = min(rep_medians) if rep_medians else None
        self.rep_max = max(rep_medians) if rep_medians else None

    def ok(self):
        return self.n > 0


def backends(res, tool, n):
    """Which backends read the processes in a jobscope column's runs (the tree table's `backend`)."""
    seen = {}
    for r in res.get("cpu_per_sample", {}).get(tool, {}).get(str(n), []):
        for k, c in ((r or {}).get("backends") or {}).items():
            seen[k] = seen.get(k, 0) + c
    return ", ".join(sorted(seen)) if seen else "–"


def best_js(res, n, tools=("jobscope_default", "jobscope_bpf", "jobscope_bpf_cgroup")):
    """jobscope's cheaper backend at N (what --backend should pick there): (Fig, tool) or (None, None)."""
    cands = [(f, t) for t in tools if (f := fig(res, t, n))]
    return min(cands, key=lambda x: x[0].median) if cands else (None, None)


def fig(res, tool, n):
    reps = res.get("cpu_per_sample", {}).get(tool, {})
    if not isinstance(reps, dict):
        return None
    f = Fig(reps.get(str(n), []))
    return f if f.ok() else None


def us(v):
    """A duration in µs, with a unit that keeps 3 significant figures readable."""
    if v is None:
        return "–"
    if abs(v) >= 10000:
        return f"{v / 1000:.1f} ms"
    if abs(v) >= 1000:
        return f"{v / 1000:.2f} ms"
    if abs(v) >= 100:
        return f"{v:.0f} µs"
    return f"{v:.1f} µs"


def sec(v):
    return "–" if v is None else us(v * 1e6)


def dur(s):
    if s is None:
        return "–"
    return f"{s / 60:g} min" if s >= 60 else f"{s:g} s"


def mib(b):
    return "–" if b is None else f"{b / 1048576:.1f} MiB"


def ratio(v):
    if v is None:
        return "–"
    return f"{v:.2f}×" if v < 10 else f"{v:.0f}×" if v >= 100 else f"{v:.1f}×"


def pct(v):
    return "–" if v is None else f"{v * 100:.2f} %"


def verdict(ok, smoke):
    if smoke:
        return "not checked (smoke)"
    if ok is None:
        return "not measured"
    return "**met**" if ok else "**missed**"


def div(a, b):
    return a / b if a is not None and b else None


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def cell(f):
    if f is None:
        return "–"
    s = f"{us(f.median)} ({us(f.p10)}–{us(f.p90)})"
    return s


def mb(b):
    return "–" if b is None else f"{b / 1e6:.0f} MB" if b < 1e10 else f"{b / 1e9:.1f} GB"


def secs(v):
    return "–" if v is None else f"{v:.2f} s" if v < 100 else f"{v:.0f} s"


def issue25(res, w, smoke):
    """The goals of issue 25, before (the --baseline build) and after (this tree), from the same run."""
    g = res.get("goals25")
    if not g:
        return
    base = res.get("baseline")
    load = (res.get("machine_load") or {}).get("goals") or {}
    w("### Goals of the performance issue (issue 25): before and after, in this run")
    w("")
    w(f"\"Before\" is the build given with `--baseline` ({'`' + base['binary'] + '`' if base else 'none given'}), "
      f"\"after\" this tree, measured alternately in the same run (medians of {res['config'].get('goal_reps', 1)} "
      f"repetitions; CPU times are user + system, from wait4 or the monitor's own `self` table). Start-up is "
      f"included where the goal says so. Machine load while these ran: "
      f"{pct(load.get('busy'))} of all CPUs busy, {pct(load.get('foreign'))} not the benchmark; wall times "
      f"are noisy on a shared machine, CPU times less so.")
    w("")
    rows = []
    bl = g.get("bpf_load", {})
    b, a = med(bl.get("baseline")), med(bl.get("this"))
    rows.append(["One BPF load, CPU (`bench/bpf_cost` open, tasks mode)", f"≤ {G25['bpf_load_ms']:g} ms",
                 "–" if b is None else f"{b:.0f} ms", "–" if a is None else f"{a:.0f} ms",
                 verdict(None if a is None else a <= G25["bpf_load_ms"], smoke)])
    inv = bl.get("inventory") or ""
    loads = inv.split(": ", 1)[1].split(" load")[0] if ": " in inv and " load" in inv else None
    rows.append([f"BPF loads in a run of `attach --backend bpf` to {res['config'].get('goal_big')} processes",
                 "1", "2 past 204 processes (the array grew by a reload)", loads or "–",
                 verdict(None if loads is None else loads == "1", smoke)])
    for n, at in sorted((g.get("attach") or {}).items(), key=lambda x: -int(x[0])):
        key = f"attach_peer_{n}"
        m = at.get("median_cpu_s") or {}
        rb, ra = div(m.get("peer"), m.get("baseline")), div(m.get("peer"), m.get("this"))
        rows.append([f"{at.get('seconds', '?')} s attach to {n} at 100 ms, start-up included: psutil peer ÷ jobscope "
                     f"(jobscope {secs(m.get('this'))} of CPU, before {secs(m.get('baseline'))}, peer "
                     f"{secs(m.get('peer'))})", f"≥ {G25[key]:g}×" if key in G25 else "–", ratio(rb), ratio(ra),
                     verdict(None if ra is None or key not in G25 else ra >= G25[key], smoke)])
    rb = g.get("run_bpf") or {}
    for mode in ("attach", "run"):
        x = rb.get(mode) or {}
        a = (x.get("this") or {}).get("us_per_process")
        b = (x.get("baseline") or {}).get("us_per_process")
        rows.append([f"BPF whole sample per process, {mode}, N = {rb.get('n', '?')} (50 ms, CPU after the warm-up)",
                     f"≤ {G25['bpf_per_process_us']:g} µs", us(b), us(a),
                     verdict(None if a is None else a <= G25["bpf_per_process_us"], smoke)])
    f1, fbase, fl1, cp1 = (fig(res, t, 1) for t in ("jobscope_default", "jobscope_baseline", "floor", "cpeer"))
    for what, ref in (("C floor", fl1), ("C peer", cp1)):
        rb_, ra_ = div(fbase.median if fbase else None, ref.median if ref else None), \
            div(f1.median if f1 else None, ref.median if ref else None)
        rows.append([f"N = 1, default set, CPU per sample ÷ {what} (jobscope {us(f1.median if f1 else None)}, "
                     f"{what} {us(ref.median if ref else None)})", f"≤ {G25['fixed_floor_ratio']:g}×", ratio(rb_),
                     ratio(ra_), verdict(None if ra_ is None else ra_ <= G25["fixed_floor_ratio"], smoke)])
    lr = g.get("long_recording") or {}
    sh = lr.get("short") or {}
    scale = (lr.get("hours") or 0) / sh["hours"] if sh.get("hours") else None
    for op, key in (("summary", "summary_s"), ("report", "report_s"), ("export", None)):
        a = ((lr.get("this") or {}).get(op) or {})
        bb = ((sh.get("baseline") or {}).get(op) or {})
        before = bb.get("wall_s") * scale if bb.get("wall_s") is not None and scale else None
        goal = f"< {G25[key]:g} s" if key else "–"
        rows.append([f"`{op}` of a {lr.get('hours', '?')} h × {lr.get('procs', '?')}-process recording, wall "
                     f"(CPU after: {secs(a.get('cpu_s'))})", goal,
                     "–" if before is None else f"{secs(before)} (its {sh.get('hours')} h × {scale:g})",
                     secs(a.get("wall_s")),
                     verdict(None if not key or a.get("wall_s") is None else a["wall_s"] < G25[key], smoke)])
    before = sh.get("v1_bytes") * scale if sh.get("v1_bytes") and scale else None
    rows.append([f"size of that recording", f"≤ {G25['size_bytes'] / 1e6:g} MB",
                 "–" if before is None else f"{mb(before)} (its {sh.get('hours')} h × {scale:g})", mb(lr.get("bytes")),
                 verdict(None if lr.get("bytes") is None else lr["bytes"] <= G25["size_bytes"], smoke)])
    st = res.get("startup") or {}
    a, b = st.get("added_wall_s_median"), st.get("baseline_added_wall_s_median")
    ca = (st.get("jobscope_run_true") or {}).get("added_cpu_s")
    cb = (st.get("baseline_run_true") or {}).get("added_cpu_s")
    rows.append([f"`jobscope run -- true` added to `true`, wall median (CPU: before {sec(cb)}, after {sec(ca)})",
                 f"< {G25['startup_added_s'] * 1e3:g} ms", sec(b), sec(a),
                 verdict(None if a is None else a < G25["startup_added_s"], smoke)])
    wn = g.get("watch_node") or {}
    sa = (wn.get("this") or {}).get("share")
    sb = (wn.get("baseline") or {}).get("share")
    ta = (wn.get("this") or {}).get("steady_share")
    tb = (wn.get("baseline") or {}).get("steady_share")
    py = (wn.get("pytyche") or {}).get("share")
    rows.append([f"`watch --node` at 1 s, share of one core over a {wn.get('seconds', '?')} s run, start-up "
                 f"included (median of {wn.get('reps', 1)}; steady, without start-up: before {pct(tb)}, after "
                 f"{pct(ta)}; pytyche's /proc/stat sampler {pct(py)})", f"≤ {G25['node_share'] * 100:g} %",
                 pct(sb), pct(sa), verdict(None if sa is None else sa <= G25["node_share"], smoke)])
    w(table(["Goal", "Target", "Before", "After", "Verdict"], rows))
    w("")
    at = g.get("attach") or {}
    bk = "; ".join(f"N = {n}: {json.dumps((x.get('backends') or {}).get('this'))}" for n, x in at.items())
    w(f"Backends the attach runs used (this tree, samples per backend): {bk or '–'}. Processes on the machine "
      f"when these ran: {g.get('machine_processes', '?')} (the BPF reader in attach, where the tree has no cgroup of "
      f"its own, walks all of them). The long recording is "
      f"bench/synth_recording's task farm (1000 processes, 16 busy at a time on 8 CPUs: "
      f"{lr.get('proc_rows_stored', '?')} process rows stored for {lr.get('samples', '?')} samples); \"before\" reads "
      f"its first {sh.get('hours', '?')} h written as the baseline wrote recordings (schema 1, every process row: "
      f"{mb(sh.get('v1_bytes'))}), scaled to {lr.get('hours', '?')} h; this tree reads that schema-1 file in "
      f"{secs(((sh.get('this_v1') or {}).get('summary') or {}).get('wall_s'))} (`summary`) and its own "
      f"{sh.get('hours', '?')} h in {secs(((sh.get('this') or {}).get('summary') or {}).get('wall_s'))}.")
    w("")


def med(xs):
    xs = [x for x in (xs or []) if x is not None]
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    with open(args.results) as f:
        res = json.load(f)
    smoke = res.get("mode") == "smoke"
    cfg = res["config"]
    ns = cfg["ns"]
    m = res["machine"]
    v = res.get("versions", {})
    L = []
    w = L.append

    w("# Benchmarks")
    w("")
    w(f"<!-- Generated by bench/report.py from {'a smoke' if smoke else 'the full'} run's results file "
      f"(bench/results/full.json for the full run). Do not edit by hand: run `{res['command']}`. -->")
    w("")
    if smoke:
        w("**This is a smoke run** (N = 1 and 10, few samples, short runs): it checks that the benchmark works; "
          "its figures are not measurements and no target is checked.")
        w("")
    foreign = {k: x["foreign"] for k, x in (res.get("machine_load") or {}).items() if x}
    if any(x > FOREIGN_WARN for x in foreign.values()):
        w("**Warning: this ran on a shared machine; other processes used it during the run** (" +
          ", ".join(f"{k}: {pct(x)} of all CPUs" for k, x in foreign.items()) +
          "), so the figures below are disturbed; run it again on a quiet machine.")
        w("")
    w("What one sample of jobscope costs, side by side with the tools it replaces, measured on the same machine in "
      "one run. Every figure below is computed by `bench/report.py` from the results file that run wrote; "
      "nothing is typed in by hand.")
    w("")
    w("## Machine and command")
    w("")
    w(table(["", ""], [
        ["CPU", f"{m.get('model_name', '?')} ({m.get('hypervisor_vendor', 'no') + ' VM' if m.get('hypervisor_vendor') else 'bare metal'})"],
        ["CPUs (nproc)", m.get("nproc")],
        ["Memory", f"{m['mem_total_bytes'] / 2**30:.1f} GiB"],
        ["Kernel", m.get("kernel")],
        ["OS", m.get("os", "?")],
        ["jobscope", f"{v.get('jobscope', '?')} (tree {v.get('git', '?')})"],
        ["Peers", f"psutil {v.get('psutil', '–')} on Python {v.get('python', '?')}; {v.get('pidstat', 'pidstat –')}; "
                  f"{v.get('hyperfine', 'hyperfine –')}"],
        ["Command", f"`{res['command']}`"],
        ["Run", f"{res['started_utc']} to {res.get('finished_utc', '?')}, {res['duration_s'] / 60:.1f} min"],
        ["Processes on the machine", f"{res.get('system_processes_at_start')} before the run"],
        ["Machine load (share of all CPUs)",
         "; ".join(f"{k}: {pct(x['busy'])} busy, {pct(x['foreign'])} not the benchmark"
                   for k, x in (res.get("machine_load") or {}).items() if x) or "–"],
    ]))
    w("")

    # ------------------------------------------------------------------ targets
    js = {n: fig(res, "jobscope_default", n) for n in ns}
    peer = {n: fig(res, "psutil_peer", n) for n in ns}
    fl = {n: fig(res, "floor", n) for n in ns}
    nmax = max(ns)
    disk = res.get("disk", {})
    st = res.get("startup", {})
    rss_reps = [r.get("summary_monitor", {}) or {} for r in res.get("cpu_per_sample", {}).get(
        "jobscope_default", {}).get(str(nmax), [])]
    rss_vals = [x.get("max_rss_bytes") for x in rss_reps if x.get("max_rss_bytes") is not None]
    rss = max(rss_vals) if rss_vals else None
    tenhz = disk.get("cpu_share_of_one_core")
    bpv = disk.get("bytes_per_value")
    per_proc = div(js[nmax].median, nmax) if js.get(nmax) else None

    w("## Targets")
    w("")
    w("The targets of the benchmark issue, for this kind of machine (2 vCPUs in a VM). "
      "\"× cheaper\" is the other tool's median CPU time per sample divided by jobscope's.")
    w("")
    rows = []
    rows.append([f"CPU per process per sample, default set, N = {nmax}", f"≤ {TARGETS['per_process_us']:g} µs",
                 us(per_proc), verdict(None if per_proc is None else per_proc <= TARGETS["per_process_us"], smoke)])
    for n in ns:
        r = div(peer[n].median, js[n].median) if peer.get(n) and js.get(n) else None
        t = TARGETS["peer_ratio_n1"] if n == 1 else TARGETS["peer_ratio_large"] if n >= 100 else None
        if t is None:
            continue
        rows.append([f"psutil peer ÷ jobscope, N = {n}", f"≥ {t:g}×", ratio(r),
                     verdict(None if r is None else r >= t, smoke)])
    for n in ns:
        r = div(js[n].median, fl[n].median) if js.get(n) and fl.get(n) else None
        rows.append([f"jobscope ÷ C floor, N = {n}", f"≤ {TARGETS['floor_ratio']:g}×", ratio(r),
                     verdict(None if r is None else r <= TARGETS["floor_ratio"], smoke)])
    rows.append([f"10 Hz on a {disk.get('tree', '?')}-process tree, share of one core "
                 f"({dur(disk.get('duration_s'))} run)", f"< {TARGETS['tenhz_share'] * 100:g} %", pct(tenhz),
                 verdict(None if tenhz is None else tenhz < TARGETS["tenhz_share"], smoke)])
    rows.append([f"jobscope RSS at N = {nmax}", f"< {TARGETS['rss_bytes_n1000'] >> 20} MiB", mib(rss),
                 verdict(None if rss is None else rss < TARGETS["rss_bytes_n1000"], smoke)])
    added = st.get("added_wall_s_mean")
    rows.append(["`jobscope run -- true` wall added to `true`", f"< {TARGETS['startup_added_s'] * 1e3:g} ms",
                 sec(added), verdict(None if added is None else added < TARGETS["startup_added_s"], smoke)])
    rows.append(["bytes on disk per stored value", f"≤ {TARGETS['bytes_per_value']:g} B",
                 "–" if bpv is None else f"{bpv:.2f} B",
                 verdict(None if bpv is None else bpv <= TARGETS["bytes_per_value"], smoke)])
    cg = [r for r in (res.get("cgroup_cost") or {}).get("results", []) if (r.get("cgroup") or {}).get("median_us")]
    cg_flat = None
    if len(cg) >= 2:
        cg_flat = max(r["cgroup"]["median_us"] for r in cg) / min(r["cgroup"]["median_us"] for r in cg)
    rows.append([f"cgroup totals: flat cost from N = {cg[0]['n'] if cg else 1} to {cg[-1]['n'] if cg else 1000}",
                 f"flat (highest ÷ lowest median ≤ {FAST['cgroup_flat']:g}×)", ratio(cg_flat),
                 verdict(None if cg_flat is None else cg_flat <= FAST["cgroup_flat"], smoke)])
    w(table(["Target", "Goal", "Measured", "Verdict"], rows))
    w("")

    issue25(res, w, smoke)

    # ------------------------------------------------------------------ issue 14 targets
    w("### Targets of the fast path (issue 14)")
    w("")
    w("\"jobscope\" in a row that compares with a peer is its cheaper backend at that N (procfs or BPF; at the "
      "busy-node case also BPF in its cgroup mode), the column named in brackets.")
    w("")
    rows = []
    f1 = fig(res, "jobscope_default", 1)
    rows.append(["jobscope CPU per sample at N = 1 (default set: the fixed cost)", f"≤ {FAST['fixed_us']:g} µs",
                 us(f1.median) if f1 else "–",
                 verdict(None if not f1 else f1.median <= FAST["fixed_us"], smoke)])
    reader = [r for r in (res.get("bpf_reader") or {}).get("results", []) if r.get("case") == "1000"
              and "error" not in r and r.get("method") in ("bpf-task", "bpf-cgroup")]
    for r in reader:
        v = r["cpu_us_per_proc"]["median"]
        rows.append([f"BPF reader alone ({r['method']}), CPU per process per pass, N = 1000",
                     f"≤ {FAST['bpf_per_process_us']:g} µs", us(v),
                     verdict(v <= FAST["bpf_per_process_us"], smoke)])
    fb = fig(res, "jobscope_bpf", 1000)
    v = div(fb.median, 1000) if fb else None
    rows.append(["jobscope with the BPF backend, whole sample (reads, model, recording) per process, N = 1000",
                 f"≤ {FAST['bpf_per_process_us']:g} µs", us(v),
                 verdict(None if v is None else v <= FAST["bpf_per_process_us"], smoke)])
    pf = fig(res, "psutil_peer", 1000)
    j, jt = best_js(res, 1000)
    r = div(pf.median, j.median) if pf and j else None
    rows.append([f"psutil peer ÷ jobscope ({dict(TOOLS).get(jt, '–')}), N = 1000", f"≥ {FAST['peer_ratio_n1000']:g}×",
                 ratio(r), verdict(None if r is None else r >= FAST["peer_ratio_n1000"], smoke)])
    keys = [str(n) for n in ns + cfg.get("big_ns", [])]
    if cfg.get("job_among"):
        keys.append(f"job{cfg['job_among'][0]}-among-{cfg['job_among'][1]}")
    for k in keys:
        cp = fig(res, "cpeer", k)
        j, jt = best_js(res, k)
        r = div(cp.median, j.median) if cp and j else None
        name = dict(BIG_TOOLS + TOOLS).get(jt, "–")
        rows.append([f"C peer ÷ jobscope ({name}), {'N = ' + k if k.isdigit() else k}",
                     f"> {FAST['cpeer_ratio']:g}× (jobscope cheaper)", ratio(r),
                     verdict(None if r is None else r > FAST["cpeer_ratio"], smoke)])
    w(table(["Target", "Goal", "Measured", "Verdict"], rows))
    w("")

    # ------------------------------------------------------------------ CPU per sample
    w("## CPU time per sample")
    w("")
    w(f"Median CPU time (user + system) one sample costs the monitor, with the 10th–90th percentile in brackets, "
      f"on an idle tree of N processes (one parent, N − 1 children in `pause()`). {cfg['reps']} repetitions of "
      f"{cfg['samples']} samples after {cfg['warmup']} warm-up samples each, every {cfg['interval_s'] * 1e3:g} ms "
      f"(pidstat: {cfg['pidstat_samples']} reports after {cfg['pidstat_warmup']}, every 1 s, its shortest "
      f"interval). A sample's cost runs from the start of one sample to the start of the next, so it includes "
      f"the timer wake-up.")
    w("")
    hdr = ["N"] + [name for _, name in TOOLS]
    rows = []
    for n in ns:
        rows.append([n] + [cell(fig(res, t, n)) for t, _ in TOOLS])
    w(table(hdr, rows))
    w("")
    w("Backend that read the processes in the BPF column's runs (the recording's `tree.backend`), by N: " +
      "; ".join(f"{n}: {backends(res, 'jobscope_bpf', n)}" for n in ns) + ". Without BPF (not root, no BTF, "
      "a build without clang) the column is /proc again and says so here.")
    w("")
    w("Per process (median ÷ N):")
    w("")
    rows = []
    for n in ns:
        rows.append([n] + [us(div(f.median, n)) if (f := fig(res, t, n)) else "–" for t, _ in TOOLS])
    w(table(hdr, rows))
    w("")
    if len(ns) >= 2:
        a, b = ns[-2], ns[-1]
        rows = []
        for t, name in TOOLS:
            fa, fb = fig(res, t, a), fig(res, t, b)
            rows.append([name, us(div(fb.median - fa.median, b - a)) if fa and fb else "–"])
        w(f"Marginal cost of one more process, from N = {a} to N = {b}: " +
          "; ".join(f"{r[0]} {r[1]}" for r in rows) + ".")
        w("")
    w("Spread across repetitions (lowest and highest of the repetitions' medians):")
    w("")
    rows = []
    for n in ns:
        rows.append([n] + [f"{us(f.rep_min)} – {us(f.rep_max)}" if (f := fig(res, t, n)) else "–"
                           for t, _ in TOOLS])
    w(table(hdr, rows))
    w("")

    w("### Ratios")
    w("")
    w("Other tool's median ÷ jobscope's (how many times cheaper jobscope is), and jobscope ÷ the C floor (how "
      "close to the floor it is; 1.00× is the floor itself).")
    w("")
    rows = []
    for n in ns:
        j, ju = fig(res, "jobscope_default", n), fig(res, "jobscope_uss", n)
        p, ps, f = fig(res, "psutil_peer", n), fig(res, "pidstat", n), fig(res, "floor", n)
        rows.append([n,
                     ratio(div(p.median, j.median)) if p and j else "–",
                     ratio(div(ps.median, j.median)) if ps and j else "–",
                     ratio(div(p.median, ju.median)) if p and ju else "–",
                     ratio(div(j.median, f.median)) if j and f else "–",
                     ratio(div(ju.median, f.median)) if ju and f else "–"])
    w(table(["N", "psutil peer ÷ jobscope", "pidstat ÷ jobscope", "psutil peer ÷ jobscope (USS every sample)",
             "jobscope ÷ floor", "jobscope (USS every sample) ÷ floor"], rows))
    w("")

    # ------------------------------------------------------------------ where the time goes
    w("### Where jobscope's time goes")
    w("")
    w("Wall time per sample of each jobscope source (its `source_stats` table) and of writing a sample to the "
      "recording (`self.prev_write_ns`), medians over the same runs (default set). The C floor's `collect` is "
      "its reads alone, without the wake-up.")
    w("")
    srcs = sorted({s for n in ns for r in res.get("cpu_per_sample", {}).get("jobscope_default", {}).get(str(n), [])
                   for s in (r.get("source_wall_us") or {})})
    rows = []
    for n in ns:
        reps = res.get("cpu_per_sample", {}).get("jobscope_default", {}).get(str(n), [])
        row = [n]
        for s in srcs:
            vals = [r["source_wall_us"][s]["median"] for r in reps if (r.get("source_wall_us") or {}).get(s)]
            row.append(us(statistics.median(vals)) if vals else "–")
        wv = [r["write_wall_us"]["median"] for r in reps if r.get("write_wall_us")]
        row.append(us(statistics.median(wv)) if wv else "–")
        fr = [r["collect_wall_us"]["median"] for r in res.get("cpu_per_sample", {}).get("floor", {}).get(str(n), [])
              if isinstance(r, dict) and r.get("collect_wall_us")]
        row.append(us(statistics.median(fr)) if fr else "–")
        rows.append(row)
    w(table(["N"] + [f"`{s}`" for s in srcs] + ["write", "C floor collect"], rows))
    w("")
    # The part of a sample that the floor does not do: every source but proc_tree, plus the write.
    notes = []
    for n in ns:
        reps = res.get("cpu_per_sample", {}).get("jobscope_default", {}).get(str(n), [])
        per = {}
        for s in srcs:
            vals = [r["source_wall_us"][s]["median"] for r in reps if (r.get("source_wall_us") or {}).get(s)]
            per[s] = statistics.median(vals) if vals else 0.0
        wv = [r["write_wall_us"]["median"] for r in reps if r.get("write_wall_us")]
        per["write"] = statistics.median(wv) if wv else 0.0
        total = sum(per.values())
        extra = total - per.get("proc_tree", 0.0)
        if total:
            notes.append(f"N = {n}: {us(extra)} of {us(total)} ({extra / total * 100:.0f} %)")
    if notes:
        w("Wall time per sample outside the per-process reads (`system`, `self` and the write), which the C floor "
          "does not do: " + "; ".join(notes) + ".")
        w("")
    rows = []
    for n in ns:
        reps = res.get("cpu_per_sample", {}).get("psutil_peer", {}).get(str(n), [])
        d = [r["discovery_cpu_us"]["median"] for r in reps if isinstance(r, dict) and r.get("discovery_cpu_us")]
        sp = [r["system_processes"] for r in reps if isinstance(r, dict) and r.get("system_processes")]
        pf = fig(res, "psutil_peer", n)
        if d and pf:
            rows.append([n, us(statistics.median(d)), f"{statistics.median(d) / pf.median * 100:.0f} %",
                         max(sp) if sp else "–"])
    if rows:
        w("The psutil peer's tree discovery alone (`children(recursive=True)`, which reads every process on the "
          "machine), CPU per sample:")
        w("")
        w(table(["N", "Discovery", "Share of the peer's sample", "Processes on the machine"], rows))
        w("")
    prof = res.get("profile")
    if prof and prof.get("by_symbol"):
        w(f"CPU profile of jobscope sampling the {prof['tree']}-process tree every {prof['interval_s'] * 1e3:g} ms "
          f"for {prof['duration_s']} s (`perf record -e cpu-clock`, flat, share of jobscope's samples; `[k]` is "
          f"kernel):")
        w("")
        w(table(["Share", "Where"], [[f"{r['percent']:.1f} %", f"`{r['what']}`"] for r in prof["by_symbol"][:15]]))
        w("")
        if prof.get("by_dso"):
            w("By object: " + "; ".join(f"{r['what']} {r['percent']:.1f} %" for r in prof["by_dso"][:6]) + ".")
            w("")
    elif prof and prof.get("problem"):
        w(f"No profile: {prof['problem']}")
        w("")

    # ------------------------------------------------------------------ heap
    heap = res.get("heap", {})
    base = res.get("baseline")
    n1 = cfg.get("fixed_tree", 1)
    fb1, fn1 = fig(res, "jobscope_baseline", n1), fig(res, "jobscope_default", n1)
    if base and fb1 and fn1:
        w("### The fixed cost: before and after")
        w("")
        w(f"jobscope (procfs backend) at N = 1 in this run, measured alternately with an older build given by "
          f"`--baseline` (`{base['binary']}`: {base['version']}), same method as the table above.")
        w("")
        w(table(["Build", "CPU per sample, median (p10–p90)", "repetitions' medians"], [
            [f"baseline `{base['binary']}`", cell(fb1), f"{us(fb1.rep_min)} – {us(fb1.rep_max)}"],
            ["this tree", cell(fn1), f"{us(fn1.rep_min)} – {us(fn1.rep_max)}"],
            ["difference", f"{us(fn1.median - fb1.median)} ({(fn1.median / fb1.median - 1) * 100:+.0f} %)", ""]]))
        w("")
    fp = res.get("fixed_profile")
    if fp and fp.get("parts"):
        w("### The fixed cost: where a sample at one process goes")
        w("")
        w(f"`perf record --call-graph dwarf` of jobscope (procfs backend) sampling one process every 10 ms for "
          f"{fp['duration_s']} s ({fp['samples']} profile samples); each profile sample is given to the first of "
          f"these parts found on its stack.")
        w("")
        w(table(["Part of a sample", "Share of jobscope's CPU"], [[k, pct(v)] for k, v in fp["parts"]]))
        w("")
    keys = [str(n) for n in cfg.get("big_ns", [])]
    if cfg.get("job_among"):
        keys.append(f"job{cfg['job_among'][0]}-among-{cfg['job_among'][1]}")
    if keys and any(fig(res, t, k) for t, _ in BIG_TOOLS for k in keys):
        w("## Beyond 1000 processes, and a small job on a busy node")
        w("")
        w("The same measurement (median CPU per sample, p10–p90) for a tree of "
          f"{' and '.join(map(str, cfg.get('big_ns', [])))} processes, and for a {cfg['job_among'][0]}-process job while a tree of {cfg['job_among'][1]} idle processes runs outside it "
          "(the psutil peer and USS-every-sample are left out: seconds per sample there). jobscope attached to a "
          "tree walks every task of the node with a PID filter (BPF tasks mode); `jobscope run` puts its command "
          "in a cgroup of its own and the cgroup mode visits only that cgroup.")
        w("")
        rows = []
        for k in keys:
            rows.append([k] + [cell(fig(res, t, k)) for t, _ in BIG_TOOLS])
        w(table(["Case"] + [name for _, name in BIG_TOOLS], rows))
        w("")
        w("Backends used: " + "; ".join(f"{k}: {name} {b}" for k in keys for t, name in BIG_TOOLS
                                        if t.startswith("jobscope") and (b := backends(res, t, k)) != "–") + ".")
        w("")
    br = res.get("bpf_reader") or {}
    if br.get("results"):
        w("## The BPF task reader alone")
        w("")
        w(f"`{br['command']}`: CPU time (user + system: the BPF program runs in the reader's system call) of one "
          "pass over the tree, back to back, per process (and per pass), median with p10–p90: the BPF reader in "
          "tasks mode (every task of the node walked, a PID filter) and cgroup mode (only the tree's cgroup), "
          "against a `pread` of kept-open stat + statm + io (what jobscope's procfs backend reads), and stat or "
          "schedstat alone. Back to back the kernel's task, signal and mm structures stay in the caches (warm): "
          "inside a sampling run at 100 ms each pass finds them cold, and the same pass costs several times more "
          "(the bulk of the whole sample with the BPF backend, not the model or the recording).")
        w("")
        cases = list(dict.fromkeys(r["case"] for r in br["results"]))
        methods = list(dict.fromkeys(r["method"] for r in br["results"] if "error" not in r))
        rows = []
        for c in cases:
            row = {r["method"]: r for r in br["results"] if r["case"] == c}
            on = next(r.get("procs_on_machine") for r in br["results"] if r["case"] == c)
            cells = []
            for mth in methods:
                r = row.get(mth)
                if not r or "error" in r:
                    cells.append("–")
                    continue
                pp, pa = r["cpu_us_per_proc"], r["cpu_us"]
                cells.append(f"{us(pp['median'])}/proc ({us(pa['median'])}/pass; {us(pp['p10'])}–{us(pp['p90'])})")
            rows.append([c, on] + cells)
        w(table(["Case", "Processes on the machine"] + methods, rows))
        w("")
        errs = {r.get("method"): r.get("error") for r in br["results"] if "error" in r}
        if errs:
            w("Not measured: " + "; ".join(f"{k}: {v}" for k, v in errs.items()) + ".")
            w("")
    elif br.get("problem"):
        w("## The BPF task reader alone")
        w("")
        w(f"Not measured: {br['problem']}")
        w("")
    cgc = res.get("cgroup_cost") or {}
    if cgc.get("results"):
        w("## The cgroup source")
        w("")
        w(f"`{cgc['command']}`: `jobscope run --cgroup auto` of a tree of N idle processes; wall time of each "
          "source's collect per sample (`source_stats`), median and p90 after 5 warm-up samples. The cgroup source "
          "reads the cgroup's own files (flat in N); proc_tree reads every process.")
        w("")
        rows = []
        for r in cgc["results"]:
            c, t = r.get("cgroup") or {}, r.get("proc_tree") or {}
            rows.append([r["n"], r.get("members") or "–", r.get("cgroup_version") or "–",
                         f"{us(c.get('median_us'))} (p90 {us(c.get('p90_us'))})",
                         f"{us(t.get('median_us'))} (p90 {us(t.get('p90_us'))})"])
        w(table(["N", "Members", "cgroup version", "`cgroup` collect", "`proc_tree` collect"], rows))
        w("")
    elif cgc.get("problem"):
        w(f"The cgroup source was not measured: {cgc['problem']}")
        w("")
    nc = res.get("node_cost") or {}
    if nc.get("results"):
        w("## The node sources")
        w("")
        w(f"`{nc['command']}`: each source's collect() run back to back on this machine into a reused row buffer, "
          "as the sampler does (warm: the figures are lower than inside a sampling run, where caches are cold).")
        w("")
        rows = []
        for r in nc["results"]:
            if "problem" in r:
                rows.append([f"`{r['source']}`", "–", "–", "–", r["problem"]])
            else:
                rows.append([f"`{r['source']}`", us(r["median_us"]), us(r["wall_us"]), us(r["cpu_us"]), r["rows"]])
        w(table(["Source", "Wall, median", "Wall, mean", "CPU, mean", "Rows per sample (or why none)"], rows))
        w("")
    pr = res.get("prom_scrape") or {}
    if pr.get("results"):
        w("## The Prometheus endpoint")
        w("")
        w(f"`{pr['command']}`: `jobscope attach --listen` on a tree of N idle processes; the monitor's time to "
          "render each sample's exposition (both formats, `jobscope_exposition_render_seconds`, median of 20) and "
          "a client's wall time per scrape (median of 200 GETs without keep-alive), with the exposition's size.")
        w("")
        rows = []
        for r in pr["results"]:
            rows.append([r["n"], f"--listen-processes {r['listen_processes']}" if r["listen_processes"] else
                         "default (scope only)", r["series"], f"{r['render_ms']:.3f} ms", f"{r['text_ms']:.3f} ms",
                         f"{r['om_ms']:.3f} ms", f"{r['text_kib']:.1f} / {r['om_kib']:.1f} KiB"])
        w(table(["Processes", "Exposed", "Series", "Render per sample", "Scrape, text", "Scrape, OpenMetrics",
                 "Size text / OM"], rows))
        w("")
    elif pr.get("problem"):
        w(f"The Prometheus endpoint was not measured: {pr['problem']}")
        w("")

    if heap.get("tools"):
        w("## One process with a 1 GiB heap" if heap.get("heap_mib") == 1024 else
          f"## One process with a {heap.get('heap_mib')} MiB heap")
        w("")
        w(f"One process whose heap of {heap.get('heap_mib')} MiB is touched (VmRSS "
          f"{heap.get('root_vmrss_kib', 0) / 1024:.0f} MiB): reading USS/PSS (`smaps_rollup`) walks every page, so "
          f"its cost grows with mapped memory. The C floor does not read it.")
        w("")
        rows = []
        for t, name in TOOLS:
            f = Fig(heap["tools"].get(t, []))
            if f.ok():
                rows.append([name, cell(f), f"{us(f.rep_min)} – {us(f.rep_max)}"])
        w(table(["Monitor", "CPU per sample, median (p10–p90)", "repetitions' medians"], rows))
        w("")

    # ------------------------------------------------------------------ RSS
    w(f"## Monitor memory at N = {nmax}")
    w("")
    w("Peak resident memory of each monitor while it sampled the tree. jobscope's own figure is its summary's "
      "`monitor.max_rss_bytes` (its `VmHWM`); the others' figure is `VmHWM` too, their own image's peak, from "
      "`/proc/PID/status`.")
    w("")
    rows = []
    for t, name in (("jobscope_default", "jobscope (default set)"), ("jobscope_uss", "jobscope (USS every sample)")):
        reps = res.get("cpu_per_sample", {}).get(t, {}).get(str(nmax), [])
        vals = [(r.get("summary_monitor") or {}).get("max_rss_bytes") for r in reps]
        vals = [x for x in vals if x is not None]
        hwm = [r.get("vmhwm_bytes_before_stop") for r in reps if r.get("vmhwm_bytes_before_stop")]
        rows.append([name, mib(max(vals)) if vals else "–",
                     f"summary `monitor.max_rss_bytes`, highest of {len(vals)} runs "
                     f"(VmHWM just before the stop signal: {mib(max(hwm)) if hwm else '–'})"])
    for t, name in (("psutil_peer", "psutil peer"), ("pidstat", "pidstat"), ("floor", "C floor")):
        reps = res.get("cpu_per_sample", {}).get(t, {})
        reps = reps.get(str(nmax), []) if isinstance(reps, dict) else []
        vals = [r.get("max_rss_bytes") for r in reps if isinstance(r, dict) and r.get("max_rss_bytes")]
        rows.append([name, mib(max(vals)) if vals else "–", f"VmHWM, highest of {len(vals)} runs"])
    w(table(["Monitor", "Peak RSS", "Source"], rows))
    w("")

    # ------------------------------------------------------------------ start-up
    w("## Start-up and exit: `jobscope run -- true`")
    w("")
    if st.get("problem"):
        w(f"Not measured: {st['problem']}")
    elif st:
        w(f"Wall time with hyperfine (`{st['command']}`), mean ± standard deviation and median:")
        w("")
        rows = []
        for key, name in (("jobscope_run_true", "`jobscope run -q -o x.db -- true`"), ("true", "`true`"),
                          ("jobscope_run_true_tmpfs", "`jobscope run -q -o /dev/shm/x.db -- true` (tmpfs)")):
            if st.get(key):
                r = st[key]
                rows.append([name, f"{sec(r['mean'])} ± {sec(r['stddev'])}", sec(r["median"]),
                             f"{sec(r['user'])} / {sec(r['system'])}", r["runs"]])
        w(table(["Command", "Mean ± sd", "Median", "user / system CPU", "Runs"], rows))
        w("")
        w(f"jobscope adds {sec(st['added_wall_s_mean'])} (mean; {sec(st['added_wall_s_median'])} median).")
        if st.get("jobscope_run_true_tmpfs"):
            d = st["jobscope_run_true"]["mean"] - st["jobscope_run_true_tmpfs"]["mean"]
            w(f"With the recording on tmpfs, where `fdatasync()` costs nothing, it is {sec(d)} faster: that is what "
              f"the recording's durability costs at start and exit on this disk.")
        if st.get("strace_top"):
            w("")
            w("System calls by time (`strace -f -c -w`, one run; strace slows every call, so read the shares):")
            w("")
            w(table(["Share", "Calls", "System call"],
                    [[f"{r['percent']:.1f} %", r["calls"], f"`{r['syscall']}`"] for r in st["strace_top"]]))
    w("")

    # ------------------------------------------------------------------ disk
    w("## Recording size")
    w("")
    if disk.get("values"):
        w(f"`jobscope attach` at {1 / disk['interval_s']:g} Hz on a {disk['tree']}-process tree for "
          f"{dur(disk['duration_s'])} ({disk['samples_stored']} samples stored), default set. Bytes per stored "
          f"value = file size (database + WAL after exit) ÷ the number of non-NULL values in all tables "
          f"(`SELECT count(col)` per column).")
        w("")
        w(table(["", ""], [
            ["File size", f"{disk['file_bytes']:,} B ({mib(disk['file_bytes'])})"],
            ["Values stored (all tables)", f"{disk['values']:,}"],
            ["… of which metric tables (all but `meta`, `columns`)", f"{disk.get('metric_values', 0):,}"],
            ["**Bytes per value**", f"**{disk['bytes_per_value']:.2f} B**"],
            ["Bytes per sample", f"{disk['file_bytes'] / disk['samples_stored']:,.0f} B"],
            ["Bytes per process per sample", f"{disk['file_bytes'] / disk['samples_stored'] / disk['tree']:,.1f} B"],
            ["Free pages in the file", f"{disk.get('freelist_count')} of {disk.get('page_count')}"],
        ]))
        w("")
        w("Values per table: " + "; ".join(f"`{k}` {t['values']:,} in {t['rows']:,} rows"
                                            for k, t in sorted(disk["tables"].items(), key=lambda kv: -kv[1]["values"])
                                            if t["values"]) + ".")
        w("")
        w(f"The same run's CPU: {pct(disk.get('cpu_share_of_one_core'))} of one core over the whole run "
          f"(summary `monitor.cpu_s` ÷ wall time, start-up included), {pct(disk.get('steady_cpu_share_of_one_core'))} "
          f"in steady state (from the `self` table after warm-up); missed samples: {disk.get('missed', '–')}.")
    else:
        w(f"Not measured: {disk.get('error', 'no disk run')}")
    w("")

    # ------------------------------------------------------------------ jitter
    j = res.get("jitter", {})
    w("## Sampling jitter")
    w("")
    if j.get("lateness_us"):
        l = j["lateness_us"]
        w(f"Lateness of each sample (`t_mono_ns − deadline_ns` in the `samples` table) at {1 / j['interval_s']:g} Hz on "
          f"a {j['tree']}-process tree for {j['duration_s']} s ({l['n']} samples after {cfg['jitter_warmup']} "
          f"warm-up):")
        w("")
        w(table(["p50", "p90", "p99", "max", "missed deadlines"],
                [[us(l["median"]), us(l["p90"]), us(l["p99"]), us(l["max"]), j.get("missed_total", "–")]]))
        cps = j.get("cpu_per_sample_us")
        if cps:
            w("")
            w(f"CPU per sample in this run: {us(cps['median'])} median, i.e. "
              f"{pct(cps['median'] * 1e-6 / j['interval_s'])} of one core at this rate.")
    else:
        w("Not measured.")
    w("")

    # ------------------------------------------------------------------ method
    w("## Method")
    w("")
    w("- **Workload**: `bench/tree N` forks N − 1 children that wait in `pause()`; the heap case adds a touched "
      "heap to the parent (`--heap-mib`). Nothing in the tree uses CPU, so every figure is the monitor's own cost.")
    w("- **jobscope**: `jobscope attach -q -i INTERVAL -o FILE --summary-json FILE [--uss-every 1] PID`, stopped "
      "with SIGTERM. Its CPU per sample is the difference of `utime_us + stime_us` (its own `getrusage()`) between "
      "consecutive rows of the recording's `self` table, divided by the samples between them; warm-up samples and "
      "the closing sample are left out. This includes writing the sample to SQLite.")
    w("- **psutil peer** (`bench/psutil_peer.py`): per sample `children(recursive=True)`, then per process "
      "`cpu_percent()`, `cpu_times()`, `memory_info()`, `memory_full_info()`, `memory_percent()`, `io_counters()`, "
      "`num_threads()`, `num_fds()`, then `cpu_percent(percpu=True)`, `virtual_memory()`, `net_io_counters()` — "
      "what JUmPER and SKA perfmon do. It stores nothing. `children(recursive=True)` reads the parent of every "
      f"process on the machine, so its cost also grows with them ({res.get('system_processes_at_start')} here "
      "before the run, plus the tree).")
    w("- **pidstat** (`bench/pidstat_cost.py`): `pidstat -h -r -u -d -t -p LIST 1 K`, its output drained; its "
      "on-CPU time is read from `/proc/PID/schedstat` half a second after each report, and the difference between "
      "two readings is one report's cost.")
    w("- **C peer** (`bench/cpeer`): the JUmPER-style native collector's pattern: every sample it finds the tree "
      "again (open, read, close of each `task/PID/children`) and opens, reads to EOF and closes "
      "`/proc/PID/{stat,statm,io,status}` of every process: four open/read/close triples per process per "
      "sample, no parsing, nothing stored.")
    w("- **jobscope (BPF backend)**: `--backend bpf` (procfs columns: `--backend procfs`); the recording's "
      "`tree.backend` says which backend read each sample.")
    w("- **C floor** (`bench/floor`): reads `/proc/PID/{stat,statm,io}` and `/proc/PID/task/PID/children` through "
      "descriptors kept open, `pread()` from offset 0 to the end, plus the open-fd count as `st_size` of "
      "`/proc/PID/fd` with `fstatat()` on a kept descriptor — the files jobscope's default set reads every "
      "sample, with no parsing, no storing, no system-wide files. What a sample cannot cost less than.")
    w("- **CPU per sample** is CPU time from the start of one sample to the start of the next (the same for all "
      "five), so the timer wake-up is in every figure. Medians and percentiles pool all repetitions' samples.")
    w("- **Scheduling**: the full run must finish within 15 minutes on 2 vCPUs, and the recording-size figure "
      "needs a 10-minute run on its own. Phase 1 measures jobscope, the psutil peer, the floor and the heap case "
      "one at a time with only the tree under test alive (an extra tree would make psutil's tree discovery, which "
      "scans every process on the machine, look more expensive). Phase 2 then starts the 10-minute 10 Hz run "
      "in the background — a few percent of one core, on the second vCPU — and in the foreground, one at a time, "
      "measures pidstat (paced by its fixed 1 s interval, it is what takes the time, and it reads only the PIDs it "
      "is given), the jitter, the start-up wall time and the profile. That run's CPU share is also the \"10 Hz on "
      "a 100-process tree\" figure.")
    w("- The targets are quoted from the benchmark issue; a verdict is computed from the measured number.")
    w("")

    problems = []
    for t, _ in TOOLS:
        d = res.get("cpu_per_sample", {}).get(t, {})
        if isinstance(d, dict) and "problem" in d:
            problems.append(f"{t}: {d['problem']}")
            continue
        for n, reps in (d.items() if isinstance(d, dict) else []):
            for r in reps:
                if isinstance(r, dict) and r.get("problem"):
                    problems.append(f"{t} N={n}: {r['problem']}")
    if problems:
        w("## Problems during the run")
        w("")
        for p in problems:
            w(f"- {p}")
        w("")

    text = "\n".join(L).rstrip() + "\n"
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
