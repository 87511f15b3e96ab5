# SPDX-License-Identifier: MIT
"""A process that changes only when told: each SIGUSR1 makes it burn 30 ms of CPU, grow its heap by 8 MiB
(every page touched), open one more descriptor and write 64 KiB to /dev/null; then it writes the number of
kicks so far into ACK (atomically, by rename) and sleeps until the next. One thread. Usage: kicked.py ACK"""
import os
import signal
import sys
import time

ack = sys.argv[1]
heap, fds, kicks = [], [], 0


def kick(signum, frame):
    global kicks
    kicks += 1
    t = time.process_time()
    while time.process_time() - t < 0.03:
        pass
    block = bytearray(8 << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    heap.append(block)
    fds.append(os.open("/dev/null", os.O_WRONLY))
    os.write(fds[-1], b"x" * 65536)
    with open(ack + ".tmp", "w") as f:
        f.write(str(kicks))
    os.rename(ack + ".tmp", ack)


signal.signal(signal.SIGUSR1, kick)
with open(ack + ".tmp", "w") as f:
    f.write("0")
os.rename(ack + ".tmp", ack)
while True:
    signal.pause()
