#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/pss.sh: what the memory headline's PSS reads cost the monitor (smaps_rollup of every process of the
# tree at the same sample: docs/METRICS.md, "Memory"), printed as the "PSS reads" section of
# docs/BENCHMARKS.md. Workloads (tests/integration/workloads/fork_share.py): a parent holding MIB that forks N
# workers sharing it, each run with --cgroup off (the PSS sum is then the headline) at two intervals, with
# smaps_rollup read (the default) and never (--uss-every 0); the difference in the monitor's CPU is the
# reads' cost. BUILD_DIR (default build) must hold a build.
#
#   bench/pss.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
build=${BUILD_DIR:-$repo/build}
bin=$build/jobscope
work=$repo/tests/integration/workloads/fork_share.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for shape in "400 4 4" "1024 0 6" "64 16 4"; do
    set -- $shape
    for iv in 0.1 1; do
        for every in 30 0; do
            "$bin" run -q -i "$iv" --cgroup off --uss-every "$every" -o "$tmp/r-$1-$2-$iv-$every.db" \
                --summary-json "$tmp/r-$1-$2-$iv-$every.json" -- python3 "$work" "$1" "$2" "$3"
        done
    done
done
python3 - "$tmp" <<'PY'
import glob, json, os, sqlite3, sys
tmp = sys.argv[1]
MiB = 1 << 20


def load(mib, n, iv, every):
    s = json.load(open(f"{tmp}/r-{mib}-{n}-{iv}-{every}.json"))
    con = sqlite3.connect(f"file:{tmp}/r-{mib}-{n}-{iv}-{every}.db?mode=ro", uri=True)
    # proc_tree's collect at the samples that read smaps_rollup of every member, and at the others
    rows = con.execute(
        "SELECT st.duration_ns, (SELECT count(*) FROM proc p WHERE p.sample = st.sample), "
        "(SELECT count(pss_bytes) FROM proc p WHERE p.sample = st.sample) "
        "FROM source_stats st WHERE st.source = 'proc_tree'").fetchall()
    con.close()
    full = [d for d, n_, k in rows if n_ and k == n_]
    other = [d for d, n_, k in rows if not k]
    return s, full, other


print("\n## PSS reads: the memory headline without a cgroup\n")
print(f"`bench/pss.sh` on {os.uname().nodename} ({os.cpu_count()} CPUs), load average {os.getloadavg()[0]:.1f}: "
      "a parent holding MIB forks N copy-on-write workers (tests/integration/workloads/fork_share.py), under "
      "`jobscope run --cgroup off`, with smaps_rollup read (default) and never (`--uss-every 0`).\n")
print("| MIB x processes | interval | samples | full PSS reads | proc_tree per sample: with a full read / "
      "without | monitor CPU: reads / never | reads' share of a CPU | headline / RSS sum |")
print("|---|---|---|---|---|---|---|---|")
for mib, n in ((400, 4), (1024, 0), (64, 16)):
    for iv in ("0.1", "1"):
        s, full, other = load(mib, n, iv, 30)
        s0, _, _ = load(mib, n, iv, 0)
        mean = lambda v: sum(v) / len(v) / 1e6 if v else float("nan")
        c, c0, wall = s["monitor"]["cpu_s"], s0["monitor"]["cpu_s"], s["wall_time_s"]
        m = s["memory"]
        print(f"| {mib} MiB x {n + 1} | {iv} s | {s['samples']['taken']} | {m['pss_samples']} | "
              f"{mean(full):.2f} / {mean(other):.2f} ms | {c:.3f} / {c0:.3f} s | {100 * (c - c0) / wall:+.2f} % | "
              f"{m['peak_bytes'] / MiB:.0f} / {m['peak_rss_sum_bytes'] / MiB:.0f} MiB |")
print("""
smaps_rollup walks the page tables of the process it describes: about 16 us per MiB resident on this VM,
so a full read of a tree holding a few GiB costs tens of ms. It is made at the first and the closing sample,
every `--uss-every` samples (30), and, when a process appears, exits or execs, when one's RSS moves by more
than a tenth (and 1 MiB), or at a phase mark, no sooner than 10 times the last full read's cost after it (a
hundred times where the scope has a cgroup of its own, whose high-water mark is then the headline): at most
a tenth (a hundredth) of one CPU, whatever the tree does. The "headline / RSS sum" column is the point: the
RSS sum counts every shared page once per process.""")
PY
