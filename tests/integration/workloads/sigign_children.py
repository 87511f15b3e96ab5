# SPDX-License-Identifier: MIT
"""A parent that ignores SIGCHLD, so the kernel reaps its children at once with no accounting.

usage: sigign_children.py COUNT CHILD_CPU
Forks COUNT children one after another; each burns CHILD_CPU seconds of CPU and exits. The parent never
waits (it cannot: with SIGCHLD ignored, wait finds nothing), so the children's CPU reaches neither its
cutime nor anyone's RUSAGE_CHILDREN: only a cgroup counts it.
"""
import os
import signal
import sys
import time


def main():
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    count, cpu = int(sys.argv[1]), float(sys.argv[2])
    for _ in range(count):
        if os.fork() == 0:
            end = time.process_time() + cpu
            while time.process_time() < end:
                pass
            os._exit(0)
        time.sleep(cpu)
    time.sleep(0.3)


if __name__ == "__main__":
    main()
