#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A process that leaves a trace in every field the BPF task reader reads, then sits idle.

    bpf_workload.py READY_FILE

Before it reports ready it:
  - runs 4 threads that each read 4 MiB from /dev/zero, write 1 MiB to a temporary file and burn ~40 ms of
    CPU, and lets them exit (their I/O, faults and CPU now live only in the kernel's signal_struct);
  - starts 3 threads that read 1 MiB each and then block (live threads: summed by walking the group);
  - runs 3 children that each burn ~60 ms of CPU and touch 8 MiB, and reaps them (cutime, cstime, cminflt);
  - forks one child that exits at once and is never reaped (a zombie);
  - starts a child shell that starts a grandchild sleep (both long-lived, for the follow test);
  - touches 24 MiB of anonymous memory, 4 MiB of a shared mapping of a memfd (RssShmem) and maps a file
    (RssFile);
then writes a JSON object to READY_FILE (atomically) and waits for SIGTERM, doing nothing:
  {"pid", "zombie", "shell", "grandchild", "dead_thread_rchar", "live_threads", "anon_bytes", "shmem_bytes"}
"""
import json
import mmap
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

MiB = 1024 * 1024


def burn(seconds):
    """Burn `seconds` of this thread's own CPU (thread_time: process_time is the whole process's, so four
    threads burning together would each stop after a quarter of it)."""
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += 1
    return x


def io_thread(path, read_mib, write_mib, cpu_s):
    with open("/dev/zero", "rb", buffering=0) as z:
        for _ in range(read_mib):
            z.read(MiB)
    if write_mib:
        with open(path, "ab", buffering=0) as f:
            for _ in range(write_mib):
                f.write(b"x" * MiB)
    burn(cpu_s)


def main():
    ready = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="bpf_workload.")
    # threads that did I/O and exited
    dead = [threading.Thread(target=io_thread, args=(os.path.join(tmp, f"t{i}"), 4, 1, 0.04)) for i in range(4)]
    for t in dead:
        t.start()
    for t in dead:
        t.join()
    # live threads, blocked
    stop = threading.Event()

    def live():
        io_thread(os.path.join(tmp, "live"), 1, 0, 0.0)
        stop.wait()

    alive = [threading.Thread(target=live, daemon=True) for _ in range(3)]
    for t in alive:
        t.start()
    # children that burned CPU and touched memory, reaped
    code = "import time\nb=bytearray(8*1024*1024)\nfor i in range(0,len(b),4096): b[i]=1\n" \
           "e=time.process_time()+0.06\nwhile time.process_time()<e: pass\n"
    for _ in range(3):
        subprocess.run([sys.executable, "-c", code], check=True)
    # a zombie: exits at once, never waited for
    zombie = os.fork()
    if zombie == 0:
        os._exit(0)
    # a long-lived child with a long-lived child of its own
    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 100000 & echo $! ; wait"], stdout=subprocess.PIPE, text=True)
    grandchild = int(shell.stdout.readline())
    # memory: anonymous, shared (memfd), file-backed
    anon = bytearray(24 * MiB)
    for i in range(0, len(anon), 4096):
        anon[i] = 1
    fd = os.memfd_create("bpf_workload")
    os.ftruncate(fd, 4 * MiB)
    shm = mmap.mmap(fd, 4 * MiB, mmap.MAP_SHARED)
    for i in range(0, 4 * MiB, 4096):
        shm[i] = 1
    fpath = os.path.join(tmp, "t0")
    with open(fpath, "rb") as f:
        fmap = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
        s = 0
        for i in range(0, len(fmap), 4096):
            s += fmap[i]
    # wait until the zombie is a zombie
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{zombie}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.01)
    info = {"pid": os.getpid(), "zombie": zombie, "shell": shell.pid, "grandchild": grandchild,
            "dead_thread_rchar": 4 * 4 * MiB, "live_threads": len(alive), "anon_bytes": len(anon),
            "shmem_bytes": 4 * MiB}
    with open(ready + ".tmp", "w") as f:
        json.dump(info, f)
    os.rename(ready + ".tmp", ready)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    stop.set()
    shell.kill()
    os.kill(grandchild, signal.SIGKILL)
    shell.wait()
    os.waitpid(zombie, 0)
    for name in os.listdir(tmp):
        os.unlink(os.path.join(tmp, name))
    os.rmdir(tmp)
    del fmap, shm, anon
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    sys.exit(main())
