# SPDX-License-Identifier: MIT
"""Double-fork a grandchild that keeps burning CPU after its parent and grandparent have exited.

usage: orphan.py BURN_SECONDS PIDFILE
The main process forks a child, the child forks a grandchild and exits at once, the main process reaps the
child and exits at once. The grandchild (now an orphan, reparented to the nearest subreaper) writes its pid
to PIDFILE and burns BURN_SECONDS of CPU.
"""
import os
import sys
import time


def burn(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        for _ in range(1000):
            x += 1


def main():
    seconds = float(sys.argv[1])
    pidfile = sys.argv[2]
    pid = os.fork()
    if pid == 0:
        parent = os.getpid()
        if os.fork() == 0:
            # grandchild: wait until the child is gone so it is really orphaned while it burns
            deadline = time.monotonic() + 10
            while os.getppid() == parent and time.monotonic() < deadline:
                time.sleep(0.005)
            tmp = pidfile + ".tmp"
            with open(tmp, "w") as f:
                f.write(f"{os.getpid()}\n")
            os.rename(tmp, pidfile)
            burn(seconds)
            os._exit(0)
        os._exit(0)
    os.waitpid(pid, 0)
    print(f"main {os.getpid()} exiting", flush=True)


if __name__ == "__main__":
    main()
