#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start: install what trying the monitor needs and is missing (a C compiler, Meson, Ninja, pkg-config
# and SQLite: nothing of the test suite's SLURM, Prometheus, Chromium, clang ...; scripts/deps.sh installs
# those), build jobscope without its tests, and monitor a sample workload (two CPU-bound workers, a process
# tree with short-lived children, 256 MiB of memory). Prints the summary and leaves the recording in
# ./jobscope-quickstart.db.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh gcc meson ninja-build pkg-config libsqlite3-dev
[ -d build-quickstart ] || meson setup build-quickstart --buildtype=debugoptimized -Dtests=false >/dev/null
ninja -C build-quickstart >/dev/null
rm -f jobscope-quickstart.db jobscope-quickstart.db-wal jobscope-quickstart.db-shm
# python3 is there: Meson runs on it
build-quickstart/jobscope run -i 250ms --uss-every 4 -o jobscope-quickstart.db -- sh -c '
  for w in 1 2; do python3 -c "import time; t = time.monotonic() + 3; exec(\"while time.monotonic() < t: pass\")" & done
  python3 -c "b = bytearray(256 << 20); b[::4096] = b\"x\" * len(b[::4096]); import time; time.sleep(2)" &
  for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done
  wait'
echo
echo "recording: jobscope-quickstart.db (try: build-quickstart/jobscope export --format csv jobscope-quickstart.db | head)"
