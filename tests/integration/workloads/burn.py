# SPDX-License-Identifier: MIT
"""Burn CPU in this process until its own CPU time reaches SECONDS.

usage: burn.py SECONDS [PIDFILE]
Writes its pid to PIDFILE (if given) before burning.
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
    return x


def main():
    seconds = float(sys.argv[1])
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write(f"{os.getpid()}\n")
    burn(seconds)


if __name__ == "__main__":
    main()
