// SPDX-License-Identifier: MIT
/*
 * nocldwait_children: `nocldwait_children COUNT MS` installs a SIGCHLD handler with SA_NOCLDWAIT (as some
 * servers and job launchers do), then forks COUNT children one after another, each burning MS milliseconds of
 * its own CPU time (CLOCK_THREAD_CPUTIME_ID) before it exits. With SA_NOCLDWAIT the kernel reaps each child
 * itself: no wait() adds its CPU time to the parent's cutime/cstime, so accounting that sums a process tree
 * loses it, although SIGCHLD is caught, not ignored (/proc/PID/stat's sigignore does not show it). The parent
 * waits for each child by polling kill(pid, 0) until the kernel has reaped it. Prints the number of SIGCHLD
 * handled; exits 0.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_chld(int sig)
{
    (void)sig;
    handled++;
}

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
    if (argc != 3) {
        fprintf(stderr, "usage: nocldwait_children COUNT MS\n");
        return 2;
    }
    int count = atoi(argv[1]);
    long ms = atol(argv[2]);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_NOCLDWAIT | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, NULL) < 0)
        return 1;
    for (int i = 0; i < count; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            burn_ms(ms);
            _exit(0);
        }
        struct timespec nap = {0, 2000000};
        while (kill(pid, 0) == 0 || errno != ESRCH)
            nanosleep(&nap, NULL);
    }
    printf("%d children auto-reaped, %d SIGCHLD handled\n", count, (int)handled);
    return 0;
}
