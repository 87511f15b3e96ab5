# SPDX-License-Identifier: MIT
"""Fork COUNT children that fault pages in and sleep; then write this process's own rusage figures to OUT.

usage: perf_oracle.py COUNT PAGES SLEEPS OUT
Each child touches PAGES fresh anonymous pages (one minor fault each) and sleeps SLEEPS times for 1 ms (one
voluntary context switch each), then _exits. When every child is reaped, the parent writes the kernel's own
accounting of the whole tree: getrusage(RUSAGE_SELF) + getrusage(RUSAGE_CHILDREN), i.e. the faults and
context switches of this process and of every child, counted by the kernel's rusage fields, not by
perf_event. OUT gets one line "processes minflt majflt nvcsw nivcsw". After the figures are taken the
parent does as little as it can (one os.write on a descriptor opened beforehand, then os._exit: no
interpreter finalization), so that hardly a fault or a switch happens that the figures do not include.
"""
import mmap
import os
import resource
import sys
import time

PAGE = mmap.PAGESIZE


def child(pages, sleeps):
    m = mmap.mmap(-1, pages * PAGE)
    for i in range(pages):
        m[i * PAGE] = 1
    for _ in range(sleeps):
        time.sleep(0.001)
    os._exit(0)


def main():
    count, pages, sleeps, out = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    line = b"%d %d %d %d %d\n" % (0, 0, 0, 0, 0)  # the formatting used below, once before
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            child(pages, sleeps)
        os.waitpid(pid, 0)
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = b"%d %d %d %d %d\n" % (count + 1, s.ru_minflt + c.ru_minflt, s.ru_majflt + c.ru_majflt,
                                  s.ru_nvcsw + c.ru_nvcsw, s.ru_nivcsw + c.ru_nivcsw)
    os.write(fd, line)
    os._exit(0)


if __name__ == "__main__":
    main()
