#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The C files of the project in .clang-format's layout (Debian's clang-format, 14 on Debian 12).
#   scripts/format.sh           reformat every C file in place
#   scripts/format.sh --check   change nothing; list the files whose layout differs, exit 1 if any
#   scripts/format.sh --list    the file set: every .c and .h under src/, include/, tests/, bench/ and fuzz/
# scripts/static.sh `format` runs the check on the same file set. A table whose layout carries meaning (a
# column per field, a macro per line) is kept as written between `// clang-format off` and `// clang-format on`.
set -euo pipefail
cd "$(dirname "$0")/.."
files() { find src include tests bench fuzz -name '*.[ch]' -type f | LC_ALL=C sort; }
FORMAT=${CLANG_FORMAT:-clang-format}
case ${1:-} in
--list)
    files
    ;;
--check)
    bad=0
    while IFS= read -r f; do
        if ! "$FORMAT" --style=file "$f" | cmp -s - "$f"; then
            echo "$f"
            bad=$((bad + 1))
        fi
    done < <(files)
    [ "$bad" = 0 ] || { echo "format: $bad of $(files | wc -l) files differ from .clang-format (scripts/format.sh fixes them)" >&2; exit 1; }
    ;;
"")
    files | xargs -d '\n' "$FORMAT" --style=file -i
    ;;
*)
    echo "usage: scripts/format.sh [--check|--list]" >&2
    exit 2
    ;;
esac
