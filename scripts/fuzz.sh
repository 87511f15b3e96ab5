#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build the libFuzzer targets (fuzz/) with clang, AddressSanitizer and UndefinedBehaviorSanitizer in a build
# directory of their own, and run each for a fixed time on its corpus (fuzz/corpus/TARGET, kept in the
# repository). CI runs the short form (scripts/test.sh: 20 s per target); the long form is
#   scripts/fuzz.sh -t 3600            # an hour per target
#   scripts/fuzz.sh -t 600 http gpu    # chosen targets
# New inputs libFuzzer finds go to $FUZZ_BUILD/new-corpus/TARGET (not into the repository; merge the
# interesting ones by hand with `fuzz_X -merge=1 fuzz/corpus/X NEW`). A crash leaves its input in
# $FUZZ_BUILD/artifacts/ and fails the script; turn it into a unit test (docs/RELIABILITY.md).
# Prints one line per target: the executions and their rate.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=20
while getopts "t:h" o; do
    case $o in
    t) secs=$OPTARG ;;
    *) sed -n '3,11p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
all=(procfs system cgroup gpu http markwire recording)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
B=${FUZZ_BUILD:-build-fuzz}
if [ ! -f "$B/build.ninja" ]; then
    CC=clang meson setup "$B" --buildtype=debugoptimized -Dfuzzing=true -Dwerror=false -Dintegration=disabled \
        -Db_sanitize=address,undefined -Db_lundef=false -Dbpf=disabled -Dpython=disabled \
        -Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer' \
        >"$B.setup.log" 2>&1 || { cat "$B.setup.log" >&2; exit 1; }
fi
ninja -C "$B" $(printf 'fuzz/fuzz_%s ' "${targets[@]}") \
    tests/fakes/nvml/libnvidia-ml.so.1 tests/fakes/rocm/librocm_smi64.so.1 >/dev/null
mkdir -p "$B/artifacts"
fail=0
for t in "${targets[@]}"; do
    mkdir -p "$B/new-corpus/$t"
    log="$B/fuzz_$t.log"
    # -close_fd_mask=2: the fake GPU libraries print each scenario syntax error; a finding is still reported
    # (libFuzzer writes its report to the original stderr)
    if ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
        "$B/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=25 -rss_limit_mb=2048 -max_len=16384 \
        -close_fd_mask=2 -print_final_stats=1 -artifact_prefix="$B/artifacts/${t}-" \
        "$B/new-corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1; then
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz $t: ok, $execs executions in ${secs} s ($((execs / secs))/s)"
    else
        echo "fuzz $t: FAILED (log $log; input in $B/artifacts/)" >&2
        grep -E 'ERROR|SUMMARY|==[0-9]+==|runtime error' "$log" | head -20 >&2 || true
        fail=1
    fi
done
exit $fail
