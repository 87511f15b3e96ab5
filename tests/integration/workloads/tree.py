# SPDX-License-Identifier: MIT
"""A small process tree for recording/export tests.

usage: tree.py PIDDIR CHILDREN CHILD_CPU HOLD
Writes its own pid to PIDDIR/main, starts CHILDREN python children (each writes PIDDIR/child<i> and burns
CHILD_CPU seconds of CPU), waits for them, then sleeps HOLD seconds.
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    piddir = sys.argv[1]
    n = int(sys.argv[2])
    cpu = sys.argv[3]
    hold = float(sys.argv[4])
    with open(os.path.join(piddir, "main"), "w") as f:
        f.write(f"{os.getpid()}\n")
    children = [
        subprocess.Popen([sys.executable, os.path.join(HERE, "burn.py"), cpu, os.path.join(piddir, f"child{i}")])
        for i in range(n)
    ]
    rc = 0
    for c in children:
        rc |= c.wait()
    time.sleep(hold)
    sys.exit(rc)


if __name__ == "__main__":
    main()
