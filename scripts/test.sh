#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The whole test suite, as CI runs it: installs what is missing, builds with warnings as errors, runs the unit
# tests (cmocka) and the integration tests (pytest, real workloads) in a normal build, the timing-sensitive ones
# again under stress-ng (every core busy), the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer at -O0 and at -O2 (the optimiser finds other warnings,
# such as -Wformat-truncation), a seconds-long smoke run of the benchmark, the packages (the wheel and the
# .debs, built and smoke-tested installed: scripts/packages.sh), static analysis and the fuzzers' short run
# (docs/RELIABILITY.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh

# setup: a fresh configuration each time, so a stale build directory cannot hide a missing file
setup() { # DIR ARGS...
    local dir=$1
    shift
    rm -rf "$dir"
    meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || { cat "$dir.setup.log" >&2; return 1; }
}

setup build --buildtype=debugoptimized
ninja -C build
meson test -C build --suite unit --print-errorlogs

setup build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false -Dintegration=disabled \
    -Dc_args=-fsanitize=float-cast-overflow
ninja -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan --suite unit --print-errorlogs

setup build-asan-o2 --buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false \
    -Dintegration=disabled
ninja -C build-asan-o2
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    meson test -C build-asan-o2 --suite unit --print-errorlogs

meson test -C build --suite integration --print-errorlogs --verbose

# the timing-sensitive tests (pytest marker `timing`: figures within tolerances) once more while another load
# keeps every core busy: a tolerance that fails on a loaded machine is a defect (CPU-time oracles, not wall time)
stress-ng --cpu "$(nproc)" --quiet & load=$!
rc=0
meson test -C build --suite integration --print-errorlogs --verbose --test-args='-m timing' || rc=$?
kill "$load" && wait "$load" || true
[ "$rc" = 0 ] || { echo "timing-sensitive tests failed under load" >&2; exit "$rc"; }

bench/run.sh --smoke --no-build

# the wheel and the Debian packages, built from a copy of the tree into build-packages/ and smoke-tested from
# their installed files (two venvs; dpkg inside an overlay mount namespace, so nothing stays installed to
# shadow build/'s library or binary in the steps before or after); docs/INSTALL.md
scripts/packages.sh

# hardening (docs/RELIABILITY.md): static analysis (cppcheck, gcc -fanalyzer; findings listed with their reasons
# in scripts/*.supp), then each fuzz target 20 s on its corpus (scripts/fuzz.sh -t 3600 is the long form)
rm -rf build-analyzer build-fuzz # configured afresh, as the builds above
STATIC_BUILD=build ANALYZER_BUILD=build-analyzer scripts/static.sh
FUZZ_BUILD=build-fuzz scripts/fuzz.sh -t 20
echo "all tests passed"
