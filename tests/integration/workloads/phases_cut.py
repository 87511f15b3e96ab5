# SPDX-License-Identifier: MIT
"""Phases whose boundaries fall between 1 s samples (issue 19), marked with `jobscope mark` (argv[1]).

  cpu_then_alloc DIR   phase A burns 0.4 s of CPU in little memory, then phase B allocates 300 MiB and
                       holds it 0.3 s (and a little past its end, as the memory of a phase usually is: the
                       sample at the end mark comes a wake-up later): A's peak must not be B's
  write_then_sleep DIR phase C writes 100 MiB to DIR/out in 1 MiB writes 5 ms apart (fsync), then phase idle
                       sleeps 1.5 s: C gets the bytes, idle none (what is written between a mark and the
                       monitor's wake-up goes to the phase before it: the spacing keeps that to a write or
                       two on a busy machine)
"""
import os
import subprocess
import sys
import time

MiB = 1024 * 1024
JS, MODE, DIR = sys.argv[1], sys.argv[2], sys.argv[3]


def mark(kind, name):
    subprocess.run([JS, "mark", kind, name], check=True)


def burn(seconds):
    t = time.thread_time()
    while time.thread_time() - t < seconds:
        pass


time.sleep(0.2)  # off the first sample
if MODE == "cpu_then_alloc":
    mark("begin", "A")
    burn(0.4)
    mark("end", "A")
    mark("begin", "B")
    b = bytearray(300 * MiB)
    for i in range(0, len(b), 4096):
        b[i] = 1
    time.sleep(0.3)
    mark("end", "B")
    time.sleep(0.1)
    del b
elif MODE == "write_then_sleep":
    mark("begin", "C")
    chunk = b"x" * MiB
    with open(os.path.join(DIR, "out"), "wb") as f:
        for _ in range(100):
            f.write(chunk)
            time.sleep(0.005)
        f.flush()
        os.fsync(f.fileno())
    mark("end", "C")
    mark("begin", "idle")
    time.sleep(1.5)
    mark("end", "idle")
else:
    sys.exit(f"unknown mode {MODE}")
