#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Static analysis, as CI runs it (scripts/test.sh): cppcheck over src/, gcc's -fanalyzer over the library and
# the CLI, in a build directory of their own, a check that no file outside src/sys/ opens a file or a
# directory itself, the layers, the sizes, and the layout: every C file as .clang-format lays it out
# (scripts/format.sh --check; `scripts/format.sh` reformats, a diff fails). Clean, or each remaining finding listed with its reason in scripts/cppcheck.supp
# (cppcheck's suppression format, a `# reason` comment above each), scripts/analyzer.supp
# (`FILE:WARNING-OPTION  # reason`, one per line) or scripts/raw_open.allow (`FILE  TEXT  # reason`). A finding
# not listed fails the script.
#   scripts/static.sh            all of them
#   scripts/static.sh cppcheck   one of them (cppcheck, analyzer, opens, layers, sizes, format)
set -euo pipefail
cd "$(dirname "$0")/.."
what=("${@:-opens layers sizes format cppcheck analyzer}")
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
    layers)
        # Each layer includes only the layers below it (docs/ARCHITECTURE.md, "Layers"): a header's layer is its
        # directory under src/, except core's leaf modules (buf, cell, util: libc only), which every layer may
        # use. The table says what each layer may include besides itself; an entry with a '/' is one header
        # (the sinks read the source registry's table catalog, and nothing else of the sources). Headers
        # without a directory (config.h, report_assets.h, the BPF skeleton, include/jobscope.h) are generated
        # or the public API: free. Exceptions: scripts/layers.allow (`FILE  HEADER  # reason`).
        declare -A may=(
            [leaf]=""
            [sys]="leaf"
            [core]="leaf sys"
            [sources]="leaf sys core"
            [model]="leaf sys core"
            [sinks]="leaf sys core model sources/registry.h"
            [engine]="leaf sys core sources model sinks"
            [report]="leaf sys core model"
            [api]="leaf sys core sources model sinks engine report"
            [spank]="leaf sys core"
            [cli]="leaf sys core sources model sinks engine report api"
        )
        layer_of() {
            case $1 in
            core/buf.[ch] | core/cell.[ch] | core/util.[ch]) echo leaf ;;
            */*) echo "${1%%/*}" ;;
            esac
        }
        new=""
        n=0
        while IFS= read -r hit; do
            file=${hit%%:*}
            inc=${hit#*#include \"}
            inc=${inc%%\"*}
            from=$(layer_of "${file#src/}")
            to=$(layer_of "$inc")
            n=$((n + 1))
            [ -n "$to" ] && [ "$to" != "$from" ] || continue
            if [ -z "${may[$from]+x}" ]; then
                new+="$hit  (no layer for ${file%/*}: add it to the table in scripts/static.sh)"$'\n'
                continue
            fi
            ok=0
            for a in ${may[$from]}; do
                [ "$a" = "$to" ] || [ "$a" = "$inc" ] && ok=1
            done
            while read -r afile ainc _; do
                [ "$afile" = "$file" ] && [ "$ainc" = "$inc" ] && ok=1
            done < <(sed -e '/^#/d' -e '/^[[:space:]]*$/d' scripts/layers.allow)
            [ $ok = 1 ] || new+="$hit  ($from may include: ${may[$from]:-nothing of the project})"$'\n'
        done < <(grep -rn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' --include='*.c' --include='*.h' src)
        if [ -z "$new" ]; then
            echo "static: no include runs up a layer ($n includes; $(sed -e '/^#/d' -e '/^[[:space:]]*$/d' scripts/layers.allow | wc -l) allowed in scripts/layers.allow)"
        else
            echo "static: includes that run up a layer (move the code down, bind by name, or list in scripts/layers.allow with the reason):" >&2
            printf '%s' "$new" >&2
            fail=1
        fi
        ;;
    sizes)
        # No function over FUNC_MAX lines (from its opening to its closing brace), no file over FILE_MAX
        # lines: split by responsibility. A function's body opens with a '{' alone at column 0, or a line at
        # column 0 ending in ') {', and closes at the next '}' alone at column 0 (the layout .clang-format
        # gives). Exceptions: scripts/size.allow (`FILE` or `FILE:FUNCTION`, then `# reason`).
        FUNC_MAX=${FUNC_MAX:-150}
        FILE_MAX=${FILE_MAX:-1500}
        allowed() { sed -e '/^#/d' -e 's/[[:space:]]*#.*//' -e '/^[[:space:]]*$/d' scripts/size.allow | grep -qxF "$1"; }
        new=""
        nfun=0
        while IFS=$'\t' read -r n where name; do
            nfun=$((nfun + 1))
            [ "$n" -gt "$FUNC_MAX" ] || continue
            allowed "${where%%:*}:$name" || new+="$where: $name() is $n lines (over $FUNC_MAX)"$'\n'
        done < <(find src -name '*.c' | sort | xargs awk '
            FNR == 1 { start = 0; sig = "" }
            start == 0 && /^[A-Za-z_]/ && !/^(typedef|struct|enum|union)[ {]/ { sig = $0 }
            start == 0 && ($0 == "{" || (/^[A-Za-z_].*\) *\{$/ && !/=/)) { start = FNR; next }
            start > 0 && $0 == "}" {
                s = sig; sub(/\(.*/, "", s); k = split(s, w, /[ \t*]+/)
                printf "%d\t%s:%d\t%s\n", FNR - start + 1, FILENAME, start, w[k]
                start = 0; sig = ""
            }')
        nfile=0
        while read -r n file; do
            [ "$file" != total ] || continue
            nfile=$((nfile + 1))
            [ "$n" -gt "$FILE_MAX" ] || continue
            allowed "$file" || new+="$file: $n lines (over $FILE_MAX)"$'\n'
        done < <(find src -name '*.[ch]' -print0 | sort -z | xargs -0 wc -l)
        if [ -z "$new" ]; then
            echo "static: no function over $FUNC_MAX lines ($nfun functions), no file over $FILE_MAX ($nfile files; $(sed -e '/^#/d' -e '/^[[:space:]]*$/d' scripts/size.allow | wc -l) allowed in scripts/size.allow)"
        else
            echo "static: too long (split by responsibility, or list in scripts/size.allow with the reason):" >&2
            printf '%s' "$new" >&2
            fail=1
        fi
        ;;
    format)
        # the layout is .clang-format's (Debian's clang-format): no hand-made diff to review, no style debate.
        # A table whose layout carries meaning is kept between `// clang-format off` and `// clang-format on`.
        if out=$(scripts/format.sh --check 2>&1); then
            echo "static: every C file as .clang-format lays it out ($(scripts/format.sh --list | wc -l) files)"
        else
            echo "static: files whose layout differs from .clang-format (run scripts/format.sh and commit):" >&2
            printf '%s\n' "$out" >&2
            fail=1
        fi
        ;;
    *) echo "static.sh: unknown analysis '$w' (cppcheck, analyzer, opens, layers, sizes, format)" >&2; exit 2 ;;
    esac
done
exit $fail
