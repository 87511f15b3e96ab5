#!/usr/bin/env python3
"""test: stands in for dask-scheduler, dask-worker and the dask client of perfmon's dask example.

scheduler FILE: writes FILE and idles (a daemon of the job that outlives the main work).
worker FILE:    burns 1.5 s of CPU, writes its own getrusage to time-NODE ('%U %S', as GNU time), idles 300 s.
client FILE:    burns 2 s of CPU and exits (the main work); prints a line (tee'd to a log).
"""
import os
import resource
import sys
import time


def burn(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1
    return x


role, path = sys.argv[1], sys.argv[2]
if role == "scheduler":
    with open(path, "w") as f:
        f.write('{"address": "tcp://127.0.0.1:8786"}\n')
    time.sleep(300)
elif role == "worker":
    burn(1.5)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    node = os.environ.get("SLURMD_NODENAME", "work")
    with open(f"time-{node}", "w") as f:
        f.write(f"{ru.ru_utime:.2f} {ru.ru_stime:.2f}\n")
    time.sleep(300)
else:
    burn(2)
    print("client done")
