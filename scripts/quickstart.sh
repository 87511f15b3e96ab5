#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start: install what is missing, build jobscope, and monitor a sample workload (two CPU workers,
# a process tree with short-lived children, 256 MiB of memory). Prints the summary and leaves the recording
# in ./jobscope-quickstart.db.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -d build ] || meson setup build --buildtype=debugoptimized >/dev/null
ninja -C build >/dev/null
rm -f jobscope-quickstart.db jobscope-quickstart.db-wal jobscope-quickstart.db-shm
build/jobscope run -i 250ms --uss-every 4 -o jobscope-quickstart.db -- sh -c '
  stress-ng --cpu 2 --timeout 3 --quiet &
  /usr/bin/python3 -c "b = bytearray(256 << 20); b[::4096] = b\"x\" * len(b[::4096]); import time; time.sleep(2)" &
  for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done
  wait'
echo
echo "recording: jobscope-quickstart.db (try: build/jobscope export --format csv jobscope-quickstart.db | head)"
