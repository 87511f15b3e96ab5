# SPDX-License-Identifier: MIT
"""COUNT sleeping children that stay alive together (a tree wider than a low descriptor limit).

usage: sleepers.py COUNT SECONDS READYFILE [RELEASEFILE]
Forks COUNT children; once all are started it writes READYFILE, and each child, seeing it, sleeps SECONDS
more: all COUNT live together for SECONDS. With RELEASEFILE they live on until it exists instead (at most
120 s): a test releases them once it has seen what it waits for, so a loaded machine cannot end them first.
Then it waits for them.
"""
import os
import sys
import time


def main():
    count, secs, ready = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    release = sys.argv[4] if len(sys.argv) > 4 else None
    pids = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            while not os.path.exists(ready):
                time.sleep(0.02)
            if release:
                end = time.monotonic() + 120
                while not os.path.exists(release) and time.monotonic() < end:
                    time.sleep(0.05)
            else:
                time.sleep(secs)
            os._exit(0)
        pids.append(pid)
    with open(ready, "w") as f:
        f.write("ready\n")
    for pid in pids:
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
