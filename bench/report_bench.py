#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Size and time of the report of a long run: the figures docs/REPORT.md quotes.

A synthetic 24 h recording at 1 s (86,401 samples; bench/synth_recording writes it through jobscope's own
recorder: an 8-CPU node, six processes, RAPL, CPU frequency, temperature, network, disk, about 70 charted
series) is reported with `jobscope report`; the page's size, the wall time and peak RSS of generating it
(median of REPS runs; `jobscope summary` of the same file alongside, the cost of reading it), and the time
headless Chromium takes to load and paint it (median of REPS loads, tests/integration/chromium.py) are
measured. `jobscope compare` of the recording with itself and `jobscope export --format hdf5` are timed too.

With --procs N the run has N processes (a task farm: 16 busy at a time on the 8 CPUs, the rest asleep;
--procs 1000 is the 24 h x 1000-process recording issue 24 bounds): the report's page must stay under
REPORT_BOUND_BYTES and its CPU time (user + system, from wait4's rusage, median of REPS) under REPORT_BOUND_CPU_S,
or the bench fails. The CPU time is the bound, not the wall time: this machine is shared.

With --events N the same run is written a second time with N `jobscope mark` events spread over it, and
its report is measured the same way (size, time, peak RSS): the page must not grow with the number of marks
(the first and last 50 are drawn, the rest are a density strip, docs/REPORT.md). The bench fails when the
events add more than EVENTS_BOUND_BYTES to the page.

usage: bench/report_bench.py [--build-dir build] [--hours 24] [--procs N] [--reps 3] [--results FILE]
                             [--keep DIR] [--screenshot PNG] [--events N] [--recording DB] [--no-export]
The build must have bench/synth_recording (meson builds it). Results: JSON on stdout and in FILE
(default bench/results/report-24h.json; with --procs N, report-24h-Nprocs.json; with --events,
report-events.json); --hours 0.5 --reps 1 is a quick smoke. --recording DB reports an existing recording
(written by bench/synth_recording with the same --hours and --procs) instead of writing one.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EVENTS_BOUND_BYTES = 1_000_000  # what any number of marks may add to a page
REPORT_BOUND_BYTES = 2_500_000  # the page of a 24 h run (any number of processes): 1.56 MB measured
REPORT_BOUND_CPU_S = 20.0  # CPU time to build it: 3.8 s measured (24 h x 1000 processes, a 2-CPU VM)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))


def timed(cmd):
    """(wall seconds, stdout) of one run."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode(errors='replace')}")
    return wall, out


def child_rusage(cmd):
    """(CPU seconds, user + system, and peak RSS in KiB) of one run of cmd, from wait4's rusage."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed")
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def median_time(cmd, reps, before=None):
    times = []
    for _ in range(reps):
        if before:
            before()
        times.append(timed(cmd)[0])
    return statistics.median(times), times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build"))
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--procs", type=int, default=0, help="processes in the run (0: six, synth_recording's default)")
    ap.add_argument("--recording", help="report this recording instead of writing one")
    ap.add_argument("--no-export", action="store_true",
                    help="skip the HDF5 export (over 4 minutes on the 24 h x 1000-process recording)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--results")
    ap.add_argument("--events", type=int, default=0, help="also measure the report with this many events")
    ap.add_argument("--keep", help="keep the files in this directory")
    ap.add_argument("--screenshot", help="also write a PNG of the page's CPU and memory sections here")
    a = ap.parse_args()
    if not a.results:
        a.results = os.path.join(HERE, "results", "report-events.json" if a.events
                                 else f"report-24h-{a.procs}procs.json" if a.procs else "report-24h.json")
    jobscope = os.path.join(a.build_dir, "jobscope")
    synth = os.path.join(a.build_dir, "bench", "synth_recording")
    for exe in (jobscope, synth):
        if not os.access(exe, os.X_OK):
            raise SystemExit(f"{exe} not built (ninja -C {a.build_dir})")
    work = a.keep or tempfile.mkdtemp(prefix="jobscope-report-bench-")
    os.makedirs(work, exist_ok=True)
    rec, page, cmp_page, h5 = (os.path.join(work, n) for n in ("run.db", "run.html", "compare.html", "run.h5"))
    for f in (rec, page, cmp_page, h5):
        if os.path.exists(f):
            os.unlink(f)
    res = {"hours": a.hours, "interval_s": 1, "procs": a.procs or 6, "reps": a.reps, "machine": platform.node(),
           "cpus": os.cpu_count(), "kernel": platform.release()}
    if a.recording:
        rec = os.path.abspath(a.recording)
    else:
        t0 = time.monotonic()
        out = subprocess.run([synth, rec, str(a.hours), "1", "0", str(a.procs)], check=True, capture_output=True,
                             text=True).stdout
        res["samples"] = json.loads(out)["samples"]
        res["write_recording_s"] = time.monotonic() - t0
    res["recording_bytes"] = os.path.getsize(rec)

    rm = lambda *files: [os.unlink(f) for f in files if os.path.exists(f)]  # noqa: E731
    res["summary_s"], res["summary_runs_s"] = median_time([jobscope, "summary", rec], a.reps)
    res["report_s"], res["report_runs_s"] = median_time([jobscope, "report", "-o", page, rec], a.reps,
                                                        lambda: rm(page))
    cpu = []
    for _ in range(a.reps):
        rm(page)
        c, res["report_max_rss_kib"] = child_rusage([jobscope, "report", "-o", page, rec])
        cpu.append(c)
    res["report_cpu_s"], res["report_cpu_runs_s"] = statistics.median(cpu), cpu
    res["report_bytes"] = os.path.getsize(page)
    res["report_bound_bytes"], res["report_bound_cpu_s"] = REPORT_BOUND_BYTES, REPORT_BOUND_CPU_S
    over = [f"{res['report_bytes']} bytes > {REPORT_BOUND_BYTES}"] if res["report_bytes"] > REPORT_BOUND_BYTES else []
    over += [f"{res['report_cpu_s']:.1f} s CPU > {REPORT_BOUND_CPU_S}"] if res["report_cpu_s"] > REPORT_BOUND_CPU_S else []
    if over:
        print(json.dumps(res, indent=2))
        raise SystemExit(f"the report of {a.hours} h x {res['procs']} processes is over its bound: {'; '.join(over)}")
    text = open(page, encoding="utf-8").read()
    res["report_charts"] = text.count("<figure class=\"chart ")
    if a.events:
        erec, epage = os.path.join(work, "events.db"), os.path.join(work, "events.html")
        rm(erec, epage)
        subprocess.run([synth, erec, str(a.hours), "1", "0", "0", str(a.events)], check=True, capture_output=True)
        res["events"] = a.events
        res["events_recording_bytes"] = os.path.getsize(erec)
        res["events_report_s"], res["events_report_runs_s"] = median_time([jobscope, "report", "-o", epage, erec],
                                                                          a.reps, lambda: rm(epage))
        rm(epage)
        res["events_report_max_rss_kib"] = child_rusage([jobscope, "report", "-o", epage, erec])[1]
        res["events_report_bytes"] = os.path.getsize(epage)
        res["events_added_bytes"] = res["events_report_bytes"] - res["report_bytes"]
        res["events_bound_bytes"] = EVENTS_BOUND_BYTES
        if res["events_added_bytes"] > EVENTS_BOUND_BYTES:
            print(json.dumps(res, indent=2))
            raise SystemExit(f"{a.events} events added {res['events_added_bytes']} bytes to the page "
                             f"(bound {EVENTS_BOUND_BYTES})")
    res["compare_s"], _ = median_time([jobscope, "compare", "-o", cmp_page, rec, rec], a.reps, lambda: rm(cmp_page))
    res["compare_bytes"] = os.path.getsize(cmp_page)
    try:
        if a.no_export:
            raise SystemExit("skipped (--no-export)")
        res["hdf5_s"], _ = median_time([jobscope, "export", "--format", "hdf5", "-o", h5, rec], 1, lambda: rm(h5))
        res["hdf5_bytes"] = os.path.getsize(h5)
    except SystemExit as e:
        res["hdf5_error"] = str(e)

    import chromium
    if chromium.available():
        renders, loads = [], []
        with chromium.Browser(work) as b:
            for _ in range(max(a.reps, 3)):
                p = b.page(1280, 900)
                t = p.load("file://" + os.path.abspath(page))
                renders.append(t["render_ms"])
                loads.append(t["load_s"])
                p.collect()
                if p.errors:
                    raise SystemExit(f"console errors: {p.errors}")
            if a.screenshot:
                import base64
                r = p.evaluate("(() => { const a = document.querySelector('#sec-cpu').getBoundingClientRect(), "
                               "b = document.querySelector('#sec-memory').getBoundingClientRect(); "
                               "return {y: a.top + window.scrollY, h: b.bottom - a.top}; })()")
                shot = p.send("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True, "clip": {
                    "x": 0, "y": r["y"] - 12, "width": 1280, "height": r["h"] + 24, "scale": 1}}, timeout=120)
                with open(a.screenshot, "wb") as f:
                    f.write(base64.b64decode(shot["data"]))
            p = b.page(1280, 900)
            t = p.load("file://" + os.path.abspath(cmp_page))
            res["chromium_compare_render_ms"] = t["render_ms"]
        res["chromium_render_ms"] = statistics.median(renders)
        res["chromium_render_runs_ms"] = renders
        res["chromium_load_s"] = statistics.median(loads)
    res["date"] = time.strftime("%Y-%m-%d", time.gmtime())
    os.makedirs(os.path.dirname(a.results), exist_ok=True)
    with open(a.results, "w") as f:
        json.dump(res, f, indent=2)
        f.write("\n")
    print(json.dumps(res, indent=2))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
