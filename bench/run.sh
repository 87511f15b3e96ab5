#!/bin/sh
# SPDX-License-Identifier: MIT
#
# bench/run.sh: the one command that reproduces docs/BENCHMARKS.md. It configures and builds jobscope and the
# benchmark helpers (bench/tree, bench/floor, bench/cpeer, ...) with Meson in BUILD_DIR (default: build;
# `meson setup` is run only when BUILD_DIR has no build.ninja yet, `ninja` always), then runs bench/bench.py,
# which measures everything, writes the results file and calls bench/report.py to write the report.
#
#   bench/run.sh            full run, about 16 minutes on 2 vCPUs: writes bench/results/full.json and
#                           docs/BENCHMARKS.md (with bench/marks.sh's and bench/pss.sh's sections appended,
#                           about three minutes)
#   bench/run.sh --smoke    about 30 seconds, N = 1 and 10, few samples, no targets checked (CI): writes
#                           BUILD_DIR/bench/results-smoke.json and BUILD_DIR/bench/BENCHMARKS-smoke.md
#
# --no-build skips Meson and Ninja (the build is done: `meson test --benchmark` runs the smoke this way).
# Other arguments are passed to bench/bench.py (--results FILE, --report FILE, --workdir DIR, --keep).
# Needs: meson, ninja, a C compiler, SQLite, and for the peers Debian's python3-psutil, sysstat (pidstat) and
# hyperfine; perf and strace are used when present. PYTHON (default /usr/bin/python3) must have psutil.
# Run it as root or as the owner of nothing else busy: the figures are CPU times of processes on this machine.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cd "$repo"

build=${BUILD_DIR:-build}
python=${PYTHON:-/usr/bin/python3}
[ -x "$python" ] || python=python3

build_it=yes
command="bench/run.sh"
for a in "$@"; do
    shift
    case "$a" in
    --no-build) build_it=no ;;
    *)
        command="$command $a"
        set -- "$@" "$a"
        ;;
    esac
done

if [ "$build_it" = yes ]; then
    if [ ! -f "$build/build.ninja" ]; then
        meson setup "$build"
    fi
    ninja -C "$build"
fi
"$python" "$here/bench.py" --build-dir "$build" --command "$command" "$@"
# the marks section (bench/marks.sh: the caller's cost of a mark, the samples taken at marks) and the PSS
# reads' section (bench/pss.sh), appended to the full report
case " $* " in
*" --smoke "* | *" --report "*) ;;
*)
    BUILD_DIR=$build "$here/marks.sh" >>"$repo/docs/BENCHMARKS.md"
    BUILD_DIR=$build "$here/pss.sh" >>"$repo/docs/BENCHMARKS.md"
    ;;
esac
