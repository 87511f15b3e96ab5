// SPDX-License-Identifier: MIT
/*
 * perf_children: `perf_children COUNT PARALLEL MS` forks COUNT children, PARALLEL at a time, each burning MS
 * milliseconds of its own CPU time (CLOCK_THREAD_CPUTIME_ID) and then calling _exit. Written in C so that a
 * child's fork and exit cost little next to its CPU burn: on Linux 6.18 an exiting task's counters are
 * folded into its parent's before its address space is torn down, so that teardown (about 1 ms here for a
 * small process, more for a forked interpreter) is the one part of a child that inherited perf counters do
 * not see. Exits 0 when every child exited 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void burn_ms(long ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    for (;;) {
        for (volatile int i = 0; i < 20000; i++)
            ;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= ms)
            return;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: perf_children COUNT PARALLEL MS\n");
        return 2;
    }
    int count = atoi(argv[1]), parallel = atoi(argv[2]), failures = 0, running = 0;
    long ms = atol(argv[3]);
    for (int i = 0; i < count || running;) {
        while (i < count && running < parallel) {
            pid_t pid = fork();
            if (pid < 0)
                return 1;
            if (pid == 0) {
                burn_ms(ms);
                _exit(0);
            }
            i++;
            running++;
        }
        int status;
        if (wait(&status) < 0)
            return 1;
        running--;
        failures += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return failures ? 1 : 0;
}
