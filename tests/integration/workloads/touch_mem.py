# SPDX-License-Identifier: MIT
"""Make MIB mebibytes resident, report, and hold them for HOLD seconds.

usage: touch_mem.py MIB HOLD
Allocates a bytearray, writes one byte in every 4096-byte page so every page is resident, prints
"READY <pid>" on stdout (flushed) and holds the memory for HOLD seconds before exiting.
"""
import os
import sys
import time


def main():
    mib = int(sys.argv[1])
    hold = float(sys.argv[2])
    buf = bytearray(mib * 1024 * 1024)
    for i in range(0, len(buf), 4096):
        buf[i] = 1
    print(f"READY {os.getpid()}", flush=True)
    time.sleep(hold)
    # keep buf alive until here
    buf[0] = 2


if __name__ == "__main__":
    main()
