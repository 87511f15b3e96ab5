// SPDX-License-Identifier: MIT
/*
 * tree: the benchmark workload. `tree N [--heap-mib M]` forks N-1 children that sit in pause(), so that the
 * process tree rooted at this process holds N processes, none of which uses any CPU. With --heap-mib the
 * parent (after forking, so the children do not share it) allocates and touches M MiB of heap, one distinct
 * byte pattern per page, so that RSS, USS and PSS all count it.
 *
 * Once every child has started (each reports on a pipe) and the heap is touched, the parent prints its PID
 * and a newline on stdout and flushes; a driver waits for that line. The parent then waits for SIGTERM,
 * SIGINT or SIGHUP, kills and reaps its children and exits 0. Each child also asks the kernel to SIGKILL it
 * when the parent dies (PR_SET_PDEATHSIG), so no child outlives a parent killed with SIGKILL.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* Global, so that the compiler cannot drop the stores that touch the heap. */
char *tree_heap;

static void usage(void)
{
    fprintf(stderr, "usage: tree N [--heap-mib M]\n"
                    "  forks N-1 idle children, optionally touches M MiB of heap in the parent,\n"
                    "  prints the parent PID when ready and waits for SIGTERM.\n");
}

static int parse_long(const char *s, long min, long max, long *ret_v)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
        return -EINVAL;
    *ret_v = v;
    return 0;
}

static void child_main(pid_t parent, int ready_fd)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
        _exit(1);
    char c = 'r';
    if (write(ready_fd, &c, 1) != 1)
        _exit(1);
    close(ready_fd);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (;;)
        pause();
}

static int touch_heap(long mib)
{
    size_t len = (size_t)mib << 20;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    tree_heap = malloc(len);
    if (!tree_heap)
        return -ENOMEM;
    for (size_t off = 0; off < len; off += (size_t)page)
        memset(tree_heap + off, (int)((off / (size_t)page) % 251) + 1, (size_t)page);
    return 0;
}

int main(int argc, char **argv)
{
    long n = 0, heap_mib = 0;
    int nargs = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--heap-mib") == 0 && i + 1 < argc) {
            if (parse_long(argv[++i], 0, 1L << 20, &heap_mib) < 0) {
                usage();
                return 2;
            }
        } else if (nargs == 0 && parse_long(argv[i], 1, 1000000, &n) == 0) {
            nargs++;
        } else {
            usage();
            return 2;
        }
    }
    if (nargs != 1) {
        usage();
        return 2;
    }

    /* Block the stop signals before forking: no signal can be lost between fork and sigwait. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGHUP);
    sigprocmask(SIG_BLOCK, &stop, NULL);

    int ready[2];
    if (pipe(ready) < 0) {
        perror("tree: pipe");
        return 1;
    }
    pid_t self = getpid();
    pid_t *kids = malloc((size_t)(n > 1 ? n - 1 : 1) * sizeof(*kids));
    if (!kids) {
        perror("tree: malloc");
        return 1;
    }
    long nkids = 0;
    int ret = 0;
    for (long i = 0; i < n - 1; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("tree: fork");
            ret = 1;
            goto out;
        }
        if (pid == 0) {
            close(ready[0]);
            child_main(self, ready[1]);
        }
        kids[nkids++] = pid;
    }
    close(ready[1]);
    for (long got = 0; got < nkids;) {
        char buf[256];
        ssize_t r = read(ready[0], buf, sizeof(buf));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            fprintf(stderr, "tree: only %ld of %ld children started\n", got, nkids);
            ret = 1;
            goto out;
        }
        got += r;
    }
    close(ready[0]);

    if (heap_mib > 0 && touch_heap(heap_mib) < 0) {
        fprintf(stderr, "tree: cannot allocate %ld MiB\n", heap_mib);
        ret = 1;
        goto out;
    }

    printf("%ld\n", (long)self);
    fflush(stdout);

    int sig;
    sigwait(&stop, &sig);
out:
    for (long i = 0; i < nkids; i++)
        kill(kids[i], SIGKILL);
    for (long i = 0; i < nkids; i++)
        while (waitpid(kids[i], NULL, 0) < 0 && errno == EINTR)
            ;
    free(kids);
    free(tree_heap);
    return ret;
}
