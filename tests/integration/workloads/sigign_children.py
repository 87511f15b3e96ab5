# SPDX-License-Identifier: MIT
"""Ignore SIGCHLD, then fork COUNT children one after another, each burning CHILD_CPU seconds of CPU.

usage: sigign_children.py COUNT CHILD_CPU
With SIGCHLD set to SIG_IGN the kernel reaps the children itself (auto-reap): no wait() ever adds their CPU
time to the parent's cutime/cstime, so accounting that sums a process tree loses it. A cgroup keeps it.
The parent waits for each child by polling kill(pid, 0) until the kernel has reaped it.
"""
import os
import signal
import sys
import time


def main():
    count, cpu = int(sys.argv[1]), float(sys.argv[2])
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            end = time.process_time() + cpu
            x = 0
            while time.process_time() < end:
                for _ in range(200):
                    x += 1
            os._exit(0)
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.005)
    print(f"{count} auto-reaped children done", flush=True)


if __name__ == "__main__":
    main()
