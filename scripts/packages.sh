#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Build jobscope's packages from the working tree and check them from their installed files, as CI does
# (docs/INSTALL.md):
#  1. the wheel: `pip wheel --no-build-isolation` (meson-python, offline), installed into two fresh virtual
#     environments (one with the system's site-packages, one without), each smoke-tested;
#  2. the Debian packages: `dpkg-buildpackage -us -uc -b` (nocheck: CI runs the unit suite before), lintian
#     (an error fails; warnings are printed), then installed with dpkg and smoke-tested in a private mount
#     namespace whose /usr, /etc and /var are overlays on the machine's own (root only), so the machine is
#     left as it was: no installed libjobscope.so.0, python3-jobscope or /usr/bin/jobscope can shadow the
#     build tree that later test steps use, even when a step fails half-way.
# Both build from a copy of the tree (tracked and untracked, not ignored, files) under OUT, never in it.
# The smoke test: `jobscope --version`, `jobscope run -- true` and its summary, the Python package's Tracker
# around a small workload with the library it loaded checked, the man page; for the .debs also the bash
# completion as bash-completion loads it, pkg-config and a C program against libjobscope-dev, the SPANK plugin's
# files, `serve` run as an unprivileged user with the unit's capabilities, and the unit verified by
# systemd-analyze (and disabled).
# Usage: scripts/packages.sh [-o OUT] [-r]   (OUT: default build-packages/; each step's time is printed;
# -r: check the packages already in OUT again, building nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
OUT=$REPO/build-packages
PY=/usr/bin/python3 # Debian's Python: meson-python is a Debian package (python3-mesonpy)

if [ "${1:-}" = --smoke ]; then # internal: the smoke test of one installation (see smoke below)
    shift
    MODE=$1 BIN=$2 PYBIN=$3 LIBDIR=$4 VERSION=$5 WORK=$6
else
    REUSE=
    while getopts "o:r" opt; do
        case $opt in
        o) OUT=$(realpath -m "$OPTARG") ;;
        r) REUSE=1 ;;
        *) echo "usage: scripts/packages.sh [-o OUT] [-r]" >&2; exit 2 ;;
        esac
    done
    MODE=
fi

step_start=0 step_cpu=0
step() { # NAME: print the previous step's wall and CPU time and start this one
    local now cpu
    times >"$OUT/.times" # this shell's finished children, user and system (a builtin: no subshell)
    now=$(date +%s.%N)
    cpu=$(tail -n1 "$OUT/.times" |
        awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } print s }')
    [ "$step_start" = 0 ] || awk -v n="$step_name" -v t="$now" -v s="$step_start" -v c="$cpu" -v d="$step_cpu" \
        'BEGIN { printf "packages: %-28s %6.1f s wall %6.1f s CPU\n", n, t - s, c - d }'
    step_name=${1:-} step_start=$now step_cpu=$cpu
}
fail() {
    echo "packages: FAILED: $*" >&2
    exit 1
}

# smoke MODE BIN PYBIN LIBDIR VERSION WORK: the checks of one installation. BIN: the jobscope it installed;
# PYBIN: the Python that imports its package; LIBDIR: where libjobscope.so.0 must be loaded from; WORK: a
# scratch folder. MODE wheel or deb (deb adds the system-wide parts).
smoke() {
    local mode=$1 bin=$2 pybin=$3 libdir=$4 version=$5 work=$6
    cd "$work"
    [ "$("$bin" --version)" = "jobscope $version" ] || fail "$bin --version: $("$bin" --version)"
    "$bin" run -q -o run.db -- true || fail "$bin run -- true"
    "$bin" summary --json run.db >run.json
    "$pybin" - "$version" run.json <<'EOF' || fail "the summary of jobscope run -- true"
import json, sys
s = json.load(open(sys.argv[2]))
assert s["jobscope_version"] == sys.argv[1], s["jobscope_version"]
assert s["command"] == ["true"] and s["exit_status"] == 0, (s["command"], s["exit_status"])
EOF
    # the Python package from the installation (not the tree: cwd is the scratch folder), its library from
    # LIBDIR, a Tracker around a workload with a child process
    env -u JOBSCOPE_LIBRARY -u PYTHONPATH "$pybin" - "$version" "$libdir" <<'EOF' || fail "Python: $pybin"
import subprocess, sys
import jobscope
from jobscope import _lib
version, libdir = sys.argv[1], sys.argv[2]
assert jobscope.library_version() == version, jobscope.library_version()
mapped = {line.split()[-1] for line in open("/proc/self/maps") if "libjobscope.so" in line}
assert len(mapped) == 1 and next(iter(mapped)).startswith(libdir + "/"), (mapped, libdir)
with jobscope.Tracker(interval=0.1, output="tracker.db") as t:
    with t.phase("work"):
        subprocess.run(["sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"], check=True)
        sum(i * i for i in range(500000))
work = t.phases["work"]
assert work["activations"] == 1 and work["cpu_time"] > 0, work
print(f"packages: {sys.executable}: jobscope {version} from {jobscope.__file__}, library {mapped.pop()}")
EOF
    # the man page, as man finds it (beside the bin/ on PATH for a venv)
    if command -v man >/dev/null; then
        local page
        page=$(env -u MANPATH PATH="$(dirname "$bin"):$PATH" man -w jobscope) || fail "man -w jobscope"
        case $page in
        "$(dirname "$(dirname "$bin")")"/*) ;;
        *) fail "man page $page is not the installation's" ;;
        esac
        env -u MANPATH PATH="$(dirname "$bin"):$PATH" MANWIDTH=80 man jobscope 2>/dev/null |
            grep -q "jobscope serve" ||
            fail "man jobscope does not render"
    fi
    [ "$mode" = deb ] || return 0

    # bash completion: the file bash-completion loads on demand for `jobscope`
    bash -c 'source /usr/share/bash-completion/bash_completion; _completion_loader jobscope # returns 124: "retry"
             complete -p jobscope >/dev/null || exit 1
             COMP_WORDS=(jobscope export --format ""); COMP_CWORD=3; _jobscope
             [ "${COMPREPLY[*]}" = "csv jsonl hdf5" ]' ||
        fail "bash completion"
    # libjobscope-dev: pkg-config and a C program linked against the installed library
    [ "$(pkg-config --modversion jobscope)" = "$version" ] || fail "pkg-config --modversion jobscope"
    printf '#include <jobscope.h>\n#include <stdio.h>\n%s\n' \
        'int main(void) { puts(js_version()); return js_phase_begin("x"); }' >v.c
    # shellcheck disable=SC2046
    cc -Wall -Werror v.c -o v $(pkg-config --cflags --libs jobscope) || fail "a C program against libjobscope-dev"
    [ "$(./v)" = "$version" ] || fail "the C program's js_version"
    local loaded
    loaded=$(ldd ./v | sed -n 's/^[[:space:]]*libjobscope\.so\.0 => \([^ ]*\) .*/\1/p')
    [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$libdir/libjobscope.so.0")" ] ||
        fail "the C program loads '$loaded', not $libdir/libjobscope.so.0"
    # the SPANK plugin and its plugstack.conf.d snippet (commented: off until an admin enables it)
    nm -D --defined-only "$libdir/jobscope/jobscope_spank.so" | grep -q slurm_spank_init || fail "SPANK plugin"
    grep -q "^#optional $libdir/jobscope/jobscope_spank.so bin=/usr/bin/jobscope" \
        /etc/slurm/plugstack.conf.d/jobscope.conf ||
        fail "plugstack.conf.d/jobscope.conf"
    # the unit: verified, disabled, and serve as the unit runs it: an unprivileged user with its capabilities
    local unit=/lib/systemd/system/jobscope-serve.service
    systemd-analyze verify "$unit" || fail "systemd-analyze verify $unit"
    [ "$(systemctl --root=/ is-enabled jobscope-serve.service 2>/dev/null || true)" = disabled ] ||
        fail "jobscope-serve.service is enabled"
    local caps port pid
    caps=$(sed -n 's/^AmbientCapabilities=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
    port=$("$pybin" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps="$caps" --ambient-caps="$caps" \
        "$bin" serve -i 200ms --listen "127.0.0.1:$port" 2>serve.err &
    pid=$!
    local ok=
    for _ in $(seq 1 100); do
        if curl -sf "http://127.0.0.1:$port/metrics" >metrics.txt 2>/dev/null &&
            grep -q '^jobscope_samples_total' metrics.txt; then
            ok=1
            break
        fi
        sleep 0.1
    done
    kill -INT "$pid"
    wait "$pid" || fail "serve: $(cat serve.err)"
    [ -n "$ok" ] || fail "serve as the unit runs it answered no /metrics: $(cat serve.err)"
}

if [ -n "$MODE" ]; then
    smoke "$MODE" "$BIN" "$PYBIN" "$LIBDIR" "$VERSION" "$WORK"
    exit 0
fi

VERSION=$(sed -nE "s/^ *version *: *'([^']+)'.*/\1/p" meson.build | head -n1)
if [ -z "$REUSE" ]; then
    rm -rf "$OUT"
    mkdir -p "$OUT/src"
    git ls-files -co --exclude-standard -z | tar -cf - --null -T - | tar -xf - -C "$OUT/src"
    step "wheel build"
    "$PY" -m pip wheel --no-build-isolation --no-deps --no-index -q -w "$OUT" "$OUT/src" >"$OUT/wheel.log" 2>&1 ||
        { cat "$OUT/wheel.log" >&2; fail "pip wheel"; }
fi
rm -rf "$OUT"/venv-* "$OUT"/work-*
WHEEL=$(ls "$OUT"/jobscope-"$VERSION"-*.whl)
step "wheel into two venvs"
for v in plain system; do
    venv=$OUT/venv-$v
    if [ $v = system ]; then "$PY" -m venv --system-site-packages "$venv"; else "$PY" -m venv "$venv"; fi
    "$venv/bin/pip" install -q --no-index --no-deps "$WHEEL" >"$OUT/pip-$v.log" 2>&1 ||
        { cat "$OUT/pip-$v.log" >&2; fail "pip install the wheel ($v)"; }
    mkdir -p "$OUT/work-$v"
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    (smoke wheel "$venv/bin/jobscope" "$venv/bin/python" "$site/jobscope" "$VERSION" "$OUT/work-$v")
done

if [ -z "$REUSE" ]; then
    step "deb build"
    (cd "$OUT/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" DEB_BUILD_PROFILES=nocheck \
        dpkg-buildpackage -us -uc -b >"$OUT/deb.log" 2>&1) ||
        { tail -50 "$OUT/deb.log" >&2; fail "dpkg-buildpackage"; }
fi
step "lintian"
lintian --fail-on error "$OUT"/jobscope_"$VERSION"_*.changes >"$OUT/lintian.txt" 2>&1 ||
    { cat "$OUT/lintian.txt" >&2; fail "lintian"; }
sed 's/^/packages: lintian: /' "$OUT/lintian.txt"

step "debs installed (overlay)"
if [ "$(id -u)" -ne 0 ]; then
    echo "packages: not root: the .debs are built and checked by lintian, not installed" >&2
else
    ov=$(mktemp -d /tmp/jobscope-packages-ov.$$.XXXX)
    trap 'rm -rf "$ov"' EXIT
    mkdir -p "$OUT/work-deb"
    debs=()
    for f in "$OUT"/*_"$VERSION"_*.deb; do
        case $f in *-dbgsym_*) ;; *) debs+=("$f") ;; esac
    done
    unshare --mount --propagation private bash -c '
        set -e
        mount -t tmpfs -o mode=0700 jobscope-packages "$0" # an upper layer overlayfs accepts, whatever / is
        for d in usr etc var; do
            mkdir -p "$0/$d.up" "$0/$d.wk"
            mount -t overlay overlay -o "lowerdir=/$d,upperdir=$0/$d.up,workdir=$0/$d.wk" "/$d"
        done
        DEBIAN_FRONTEND=noninteractive dpkg -i "${@:5}" >"$1/dpkg.log" 2>&1 || { cat "$1/dpkg.log" >&2; exit 1; }
        du -sk /usr/bin/jobscope /usr/lib/*/libjobscope.so.0.* /usr/lib/python3/dist-packages/jobscope \
            /usr/lib/*/jobscope /usr/share/man/man1/jobscope.1.gz /usr/share/doc/jobscope >"$1/installed-sizes.txt"
        "$2" --smoke deb /usr/bin/jobscope /usr/bin/python3 "$(dirname /usr/lib/*/libjobscope.so.0)" "$3" "$4"
    ' "$ov" "$OUT" "$REPO/scripts/packages.sh" "$VERSION" "$OUT/work-deb" "${debs[@]}" || fail "the .debs"
    rm -rf "$ov"
    trap - EXIT
    sed 's/^/packages: installed (KiB): /' "$OUT/installed-sizes.txt"
fi
step
for f in "$WHEEL" "$OUT"/*_"$VERSION"_*.deb; do
    printf 'packages: %-52s %6d KiB\n' "$(basename "$f")" $(($(stat -c %s "$f") / 1024))
done
echo "packages: all checks passed"
