# SPDX-License-Identifier: MIT
"""A parent that holds MIB mebibytes and forks N workers sharing them (copy-on-write, read only), as a
multiprocessing pool over a loaded dataset does: the job uses about MIB, while the sum of the processes' RSS
counts the shared pages N+1 times.

usage: fork_share.py MIB N HOLD   (the workers read every page, then hold for HOLD seconds)
"""
import os
import sys
import time

mib, n, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
buf = bytearray(mib * 1024 * 1024)
for i in range(0, len(buf), 4096):
    buf[i] = 1
pids = []
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        s = 0
        for i in range(0, len(buf), 4096):
            s += buf[i]
        time.sleep(hold)
        os._exit(0 if s == len(buf) // 4096 else 1)
    pids.append(pid)
ok = all(os.waitpid(p, 0)[1] == 0 for p in pids)
sys.exit(0 if ok else 1)
