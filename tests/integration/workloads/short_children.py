# SPDX-License-Identifier: MIT
"""Spawn COUNT short-lived children, PARALLEL at a time, each burning CHILD_CPU seconds of CPU.

usage: short_children.py COUNT PARALLEL CHILD_CPU
Children are plain fork()s (no exec) that busy-loop until their own CPU clock reaches CHILD_CPU and then _exit.
The driver itself mostly sleeps in waitpid, so almost all the CPU of the run is in children that each live
a few tens of milliseconds: a sampler at a 1 s interval sees almost none of them.
"""
import os
import sys
import time


def child(cpu):
    end = time.process_time() + cpu
    x = 0
    while time.process_time() < end:
        for _ in range(200):
            x += 1
    os._exit(0)


def main():
    count = int(sys.argv[1])
    parallel = int(sys.argv[2])
    cpu = float(sys.argv[3])
    started = 0
    running = 0
    failures = 0
    while started < count or running:
        while started < count and running < parallel:
            pid = os.fork()
            if pid == 0:
                child(cpu)
            started += 1
            running += 1
        _, status = os.wait()
        running -= 1
        if status != 0:
            failures += 1
    print(f"spawned {started} children, {failures} failed", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
