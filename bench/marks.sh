#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/marks.sh: the caller's cost of a mark (bench/marks_cost.c), without a monitor and under
# `jobscope run`, printed as the "Marks" section of docs/BENCHMARKS.md (paste it there; bench/run.sh does not
# regenerate it). BUILD_DIR (default build) must hold a build (ninja -C build).
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
python3 - "$none" "$none_paced" "$with" "$with_paced" "$mon" "$pairs" <<'PY'
import json, sys, os
n, np_, w, wp, mon = (json.loads(a) for a in sys.argv[1:6])
pairs = int(sys.argv[6])
ph = mon.get("phases", {})
print("## Marks: the caller's cost of js_phase_begin / js_phase_end\n")
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
print(f"Back to back, the monitor received {ph.get('marks', 0):,} marks and recorded that the job dropped "
      f"{ph.get('dropped_by_senders', 0):,}; it spent {mon['monitor']['cpu_s']:.2f} s of CPU on the run "
      f"({mon['monitor']['mean_sample_cost_s'] * 1e3:.1f} ms per sample, receiving and writing the marks).")
PY
