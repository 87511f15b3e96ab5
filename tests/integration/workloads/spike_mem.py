# SPDX-License-Identifier: MIT
"""Touch MIB mebibytes for HOLD seconds, DELAY seconds after start, free them and go on to END seconds.

usage: spike_mem.py MIB DELAY HOLD END
The spike (resident, every page written) falls between two samples when it is shorter than the sampling
interval: a sampler sees none of it; a kernel high-water mark (the cgroup's memory.peak /
memory.max_usage_in_bytes, or VmHWM) does. END 0: exit as soon as the memory is freed.
"""
import sys
import time


def main():
    mib, delay, hold, end = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
    t0 = time.monotonic()
    time.sleep(delay)
    n = mib * 1024 * 1024
    buf = bytearray(n)
    buf[::4096] = b"\x01" * (n // 4096)  # one write per page: every page resident
    time.sleep(hold)
    del buf
    left = end - (time.monotonic() - t0)
    if left > 0:
        time.sleep(left)


if __name__ == "__main__":
    main()
