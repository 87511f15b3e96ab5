# SPDX-License-Identifier: MIT
"""N children that each burn a few milliseconds of CPU, then idle; after HOLD seconds all of them and the main
process exit at the same moment.

usage: many_exit.py N HOLD
Each child burns between 5 and 15 ms of CPU (so its utime/stime in clock ticks are truncated by a different
amount) and then sleeps. After HOLD seconds the main process SIGKILLs the children and exits at once without
waiting for them (they are reaped by the nearest subreaper).
"""
import os
import signal
import sys
import time


def main():
    n = int(sys.argv[1])
    hold = float(sys.argv[2])
    pids = []
    for i in range(n):
        pid = os.fork()
        if pid == 0:
            end = time.process_time() + 0.005 + 0.01 * i / max(n - 1, 1)
            while time.process_time() < end:
                pass
            while True:
                time.sleep(10)
        pids.append(pid)
    time.sleep(hold)
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    os._exit(0)


if __name__ == "__main__":
    main()
