#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/marks.sh: the caller's cost of a mark (bench/marks_cost.c), without a monitor and under
# `jobscope run`, the CPU of one `jobscope mark` exec (the CLI's start-up, what a job script pays per mark),
# and what the samples the monitor takes at begin/end marks cost it (marks at 0 to 10,000 pairs a second:
# the samples taken for marks, the monitor's CPU against a run without marks, the time from a mark to its
# sample), printed as the "Marks" section of docs/BENCHMARKS.md (bench/run.sh appends it to the full report).
# BUILD_DIR (default build) must hold a build (ninja -C build).
#
#   bench/marks.sh [PAIRS]    default 1,000,000 begin/end pairs back to back, then 20,000 paced pairs
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build=${BUILD_DIR:-$repo/build}
pairs=${1:-1000000}
bin=$build/jobscope
cost=$build/bench/marks_cost
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset JOBSCOPE_SOCKET
none=$("$cost" "$pairs")
none_paced=$("$cost" --paced 20000)
with=$("$bin" run -q -i 1s -o "$tmp/a.db" -- "$cost" "$pairs")
with_paced=$("$bin" run -q -i 1s -o "$tmp/b.db" -- "$cost" --paced 20000)
mon=$("$bin" summary --json "$tmp/a.db")
for hz in 0 10 100 1000 10000; do
    "$bin" run -q -i 1s -o "$tmp/rate-$hz.db" --summary-json "$tmp/rate-$hz.json" -- "$cost" --rate "$hz" 5 >/dev/null
done
python3 - "$none" "$none_paced" "$with" "$with_paced" "$mon" "$pairs" "$bin" "$tmp" <<'PY'
import json, sys, os, resource, sqlite3, statistics, subprocess
n, np_, w, wp, mon = (json.loads(a) for a in sys.argv[1:6])
pairs = int(sys.argv[6])
binary = sys.argv[7]
tmp = sys.argv[8]


def cut_samples(hz):
    """samples taken for marks, all samples, the monitor's CPU, and the time from the last mark before each
    sample taken for marks to that sample (ms: median, 99th centile)"""
    s = json.load(open(f"{tmp}/rate-{hz}.json"))
    con = sqlite3.connect(f"file:{tmp}/rate-{hz}.db?mode=ro", uri=True)
    # a recording gets its marks table with its first mark (tables are created when first written)
    has_marks = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'marks'").fetchone()
    lat = [(t - m) / 1e6 for t, m in con.execute(
        "SELECT s.t_mono_ns, (SELECT max(t_mono_ns) FROM marks k WHERE k.sample = s.sample) FROM samples s "
        "WHERE s.for_marks = 1") if m is not None] if has_marks else []
    cut = con.execute("SELECT count(*) FROM samples WHERE for_marks = 1").fetchone()[0]
    con.close()
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
    return cut, s["samples"]["taken"], s["monitor"]["cpu_s"], s["wall_time_s"], p(0.5), p(0.99)


def exec_cost(runs=200):
    """CPU (user + system) of one `jobscope mark event x` outside a monitored run, mean of `runs` execs: what
    a job script pays per mark command, almost all of it the dynamic loader mapping the CLI's libraries."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        subprocess.run([binary, "mark", "event", "x"], check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / runs


mark_cpu = exec_cost()
libs = len(subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout.splitlines())
ph = mon.get("phases", {})
print("\n## Marks: the caller's cost of js_phase_begin / js_phase_end\n")
print(f"`bench/marks.sh` on {os.uname().nodename} ({os.cpu_count()} CPUs), {pairs:,} begin/end pairs back to back, "
      "then 20,000 pairs 20 us apart (each call timed on its own). Figures per mark.\n")
print("| monitor | back to back: wall | back to back: caller CPU | paced: median | paced: 99th centile | not sent |")
print("|---|---|---|---|---|---|")
print(f"| none (JOBSCOPE_SOCKET unset) | {n['ns_per_mark']:.0f} ns | {n['cpu_ns_per_mark']:.0f} ns | "
      f"{np_['median_ns']} ns | {np_['p99_ns']} ns | 0 |")
print(f"| `jobscope run -i 1s` | {w['ns_per_mark']:.0f} ns | {w['cpu_ns_per_mark']:.0f} ns | {wp['median_ns']} ns | "
      f"{wp['p99_ns']} ns | {w['not_sent']:,} of {w['marks']:,} back to back (queue full: dropped, counted); "
      f"{wp['not_sent']} paced |")
print()
print(f"Back to back, the monitor received {ph.get('marks', 0):,} marks, rejected "
      f"{ph.get('rejected_by_monitor', 0):,} (over 100,000 between two samples) and recorded that the job dropped "
      f"{ph.get('dropped_by_senders', 0):,}; it spent {mon['monitor']['cpu_s']:.2f} s of CPU on the run "
      f"({mon['monitor']['mean_sample_cost_s'] * 1e3:.1f} ms per sample, receiving and writing the marks). "
      f"Load average while measuring: {os.getloadavg()[0]:.1f}.")
rates = {hz: cut_samples(hz) for hz in (0, 10, 100, 1000, 10000)}
base_cpu = rates[0][2] / rates[0][3]
print("\n### The samples taken at marks (phases cut at their marks)\n")
print("Every begin and end mark makes the monitor take a sample at once; marks in a burst coalesce: samples "
      "taken for marks are at least 10 ms and 20 times the last sample's cost apart. `marks_cost --rate HZ 5` "
      "under `jobscope run -i 1s` (HZ begin/end pairs a second for 5 s, one process):\n")
print("| pairs / s | samples for marks | samples in all | monitor CPU | its share of a CPU, less the run without "
      "marks | mark to its sample: median | 99th centile |")
print("|---|---|---|---|---|---|---|")
for hz, (cut, taken, cpu, wall, med, p99) in rates.items():
    extra = cpu / wall - base_cpu
    print(f"| {hz:,} | {cut} | {taken} | {cpu:.3f} s | {100 * extra:+.2f} % | "
          + ("-" if hz == 0 else f"{med:.2f} ms") + " | " + ("-" if hz == 0 else f"{p99:.2f} ms") + " |")
print("\nThe bound holds: at most 100 samples a second are taken for marks however many arrive (fewer when each "
      "such sample writes many marks: the gap is also 20 times the last sample's cost), so the samples cost the "
      "monitor at most about 5% of one CPU; above that, at the highest rates, is receiving and recording the marks "
      "themselves, which the monitor pays with or without the samples. What the job does between a mark and the "
      "sample taken for it (the median above) is counted in the phase before the mark; the marks of one gap are "
      "placed in time between the samples around them (docs/PHASES.md).")
print(f"\nThe CLI's `jobscope mark` (one exec per mark, from a shell script; outside a monitored run): "
      f"{mark_cpu * 1e3:.1f} ms of CPU per call (user + system, mean of 200 execs), {libs} lines of `ldd` "
      "(libraries mapped at start). libpfm4, libmicrohttpd and HDF5 are dlopen'ed by the features that use "
      "them, so a mark does not map them (when they were linked: 35 to 47 ms and 42 lines on the development VM).")
print("""
Reading the table: without a monitor a mark is an atomic load and a branch (plus validating the name); the
paced figures include the two `clock_gettime` calls that time each call (about 25 ns). With a monitor a
mark is one `send` on a Unix SOCK_SEQPACKET socket, about 2 us of the caller's CPU on a VM where system calls
are costly. Back to back, the wall time exceeds the CPU time because the caller and the monitor (and any
other load) share the CPUs; the caller never waits on the monitor (`MSG_DONTWAIT`): when the connection's
queue is full the mark is dropped and counted, in a page the sender shares with the monitor (so the monitor
knows every drop) and with the sender's next delivered mark. A high 99th centile in the paced run is
the caller being preempted on a busy machine, not the mark.""")
PY
