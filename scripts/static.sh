#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Static analysis, as CI runs it (scripts/test.sh): cppcheck over src/, gcc's -fanalyzer over the library and
# the CLI, in a build directory of their own, and a check that no file outside src/sys/ opens a file or a
# directory itself. Clean, or each remaining finding listed with its reason in scripts/cppcheck.supp
# (cppcheck's suppression format, a `# reason` comment above each), scripts/analyzer.supp
# (`FILE:WARNING-OPTION  # reason`, one per line) or scripts/raw_open.allow (`FILE  TEXT  # reason`). A finding
# not listed fails the script.
#   scripts/static.sh            all three
#   scripts/static.sh cppcheck   one of them (cppcheck, analyzer, opens)
set -euo pipefail
cd "$(dirname "$0")/.."
what=("${@:-opens cppcheck analyzer}")
what=(${what[@]})
fail=0
for w in "${what[@]}"; do
    case $w in
    cppcheck)
        B=${STATIC_BUILD:-build-static}
        [ -f "$B/config.h" ] || meson setup "$B" -Dintegration=disabled >/dev/null
        ninja -C "$B" config.h >/dev/null 2>&1 || true
        # the BPF program is compiled by clang for the BPF target with its own macros: not C for cppcheck
        # SPANK_PLUGIN() is slurm/spank.h's macro (a system header cppcheck does not read): defined away
        if cppcheck --quiet --enable=warning,portability --inline-suppr --std=c11 -j2 -D_GNU_SOURCE -I src \
            -I include -I "$B" "-DSPANK_PLUGIN(name,version)=" --suppressions-list=scripts/cppcheck.supp --suppress=missingIncludeSystem \
            -i src/sources/bpf/tasks.bpf.c --error-exitcode=1 --template='{file}:{line}: {severity}: {message} [{id}]' \
            src; then
            echo "static: cppcheck clean"
        else
            echo "static: cppcheck found the above (fix it, or list it in scripts/cppcheck.supp with the reason)" >&2
            fail=1
        fi
        ;;
    analyzer)
        B=${ANALYZER_BUILD:-build-analyzer}
        if [ ! -f "$B/build.ninja" ]; then
            meson setup "$B" --buildtype=debugoptimized -Dwerror=false -Dintegration=disabled -Dc_args=-fanalyzer \
                >"$B.setup.log" 2>&1 || { cat "$B.setup.log" >&2; exit 1; }
        fi
        log="$B/analyzer.log"
        ninja -C "$B" -t clean >/dev/null # every file analysed again: the log must hold every finding
        ninja -C "$B" jobscope >"$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
        # every -Wanalyzer-* warning as FILE:OPTION, minus the listed ones
        found=$(sed -n 's|^\(\.\./\)*\([^:]*\):[0-9]*:[0-9]*: warning: .*\[\(-Wanalyzer-[a-z-]*\)\]$|\2:\3|p' "$log" |
            sed 's|^.*/src/|src/|' | sort -u)
        listed=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' scripts/analyzer.supp | sort -u)
        anyfile=$(printf '%s\n' "$listed" | sed -n 's/^\*://p')
        new=$(comm -23 <(printf '%s\n' "$found" | sed '/^$/d') <(printf '%s\n' "$listed") |
            { if [ -n "$anyfile" ]; then grep -v -F -f <(printf ':%s\n' $anyfile) || true; else cat; fi; })
        if [ -z "$new" ]; then
            echo "static: gcc -fanalyzer clean ($(printf '%s\n' "$found" | sed '/^$/d' | wc -l) listed findings)"
        else
            echo "static: gcc -fanalyzer found (see $log; fix, or list in scripts/analyzer.supp with the reason):" >&2
            printf '%s\n' "$new" >&2
            grep -F -f <(printf '%s\n' "$new" | sed 's/:.*//') "$log" | grep 'warning:' | head -40 >&2 || true
            fail=1
        fi
        ;;
    opens)
        # open(), openat(), opendir(), fdopendir(), fopen() ... called outside src/sys/ (comment lines skipped):
        # the path module's helpers never block and pass through fault injection; raw calls bypass both
        found=$(grep -rnE '(^|[^_.>a-zA-Z0-9])(open|openat|openat2|creat|opendir|fdopendir|fopen|freopen|popen|scandir)[[:space:]]*\(' \
            --include='*.c' --include='*.h' src | grep -v '^src/sys/' | grep -vE '^[^:]*:[0-9]+:[[:space:]]*(/?\*|//)' || true)
        new=""
        while IFS= read -r hit; do
            [ -n "$hit" ] || continue
            file=${hit%%:*}
            ok=0
            while read -r afile atext; do
                atext=${atext%%  #*}
                [ "$afile" = "$file" ] && [[ "$hit" == *"$atext"* ]] && ok=1
            done < <(sed -e '/^#/d' -e '/^[[:space:]]*$/d' scripts/raw_open.allow)
            [ $ok = 1 ] || new+="$hit"$'\n'
        done <<<"$found"
        if [ -z "$new" ]; then
            echo "static: no raw open outside src/sys/ ($(printf '%s\n' "$found" | sed '/^$/d' | wc -l) allowed in scripts/raw_open.allow)"
        else
            echo "static: raw opens outside src/sys/ (use fs_open, fs_opendir, the PID iterator, fs_create; or list in scripts/raw_open.allow with the reason):" >&2
            printf '%s' "$new" >&2
            fail=1
        fi
        ;;
    *) echo "static.sh: unknown analysis '$w' (cppcheck, analyzer, opens)" >&2; exit 2 ;;
    esac
done
exit $fail
