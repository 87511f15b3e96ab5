# SPDX-License-Identifier: MIT
"""A stand-in for a GPU job, for the GPU tests with the fake NVML and ROCm SMI libraries.

usage: gpu_job.py MAINPIDFILE CHILDPIDFILE SECONDS
Writes its own PID to MAINPIDFILE and starts a child that writes its PID to CHILDPIDFILE (each file written
whole, then renamed, so a reader never sees half a number); both live SECONDS, then the child exits and
the main process waits for it. A fake library's scenario names these files (`proc compute file:PATH ...`),
so the fake lists the job's processes on its GPUs beside the scenario's foreign PIDs.
"""
import os
import subprocess
import sys
import time


def write_pid(path, pid):
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(f"{pid}\n")
    os.rename(tmp, path)


def main():
    main_file, child_file, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
    if main_file == "--child":
        write_pid(child_file, os.getpid())
        time.sleep(secs)
        return
    write_pid(main_file, os.getpid())
    child = subprocess.Popen([sys.executable, __file__, "--child", child_file, str(secs)])
    child.wait()


if __name__ == "__main__":
    main()
