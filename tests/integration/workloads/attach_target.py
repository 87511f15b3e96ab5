# SPDX-License-Identifier: MIT
"""A workload to attach to.

usage: attach_target.py GOFILE PRE_CPU CHILD_CPU TAIL PIDFILE
Prints "READY <pid>" and waits (up to 30 s) for GOFILE to exist; then burns PRE_CPU seconds, starts a child
that burns CHILD_CPU seconds (writing its pid to PIDFILE), reaps it, sleeps TAIL seconds and exits 0.
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def burn(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        for _ in range(1000):
            x += 1


def main():
    gofile, pre, child_cpu, tail, pidfile = sys.argv[1:6]
    print(f"READY {os.getpid()}", flush=True)
    deadline = time.monotonic() + 30
    while not os.path.exists(gofile) and time.monotonic() < deadline:
        time.sleep(0.01)
    burn(float(pre))
    subprocess.run([sys.executable, os.path.join(HERE, "burn.py"), child_cpu, pidfile], check=True)
    time.sleep(float(tail))


if __name__ == "__main__":
    main()
