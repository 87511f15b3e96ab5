/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the fault-injection layer (src/sys/sysio.c) and of the readers above it (src/sys/fsroot.c):
 * the spec syntax, every N-th call failing, COUNT making the fault clear and AFTER letting setup through, the
 * counts kept per rule, and what the readers make of each fault: EINTR retried, a short pread continued, an
 * error passed up as -errno with an empty buffer, and the next read clean once the fault clears.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sys/fsfile.h"
#include "sys/fsroot.h"
#include "sys/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void spec_syntax(void **state)
{
    (void)state;
    static const char *const bad[] = {"read",         "read:EIO",      "read:EIO:0",
                                      "read:EIO:x",   "read:EBOGUS:1", "bogus:EIO:1",
                                      "open:short:1", "read:EIO:1:0",  "read:EIO:1:2:3:4",
                                      "read:EIO:1,",  "read:EIO:-1",   "read:EIO:1:-:-2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(sysio_faults_set(bad[i]), -EINVAL);
        assert_int_equal(sysio_armed, 0); /* a bad spec leaves nothing armed */
    }
    assert_int_equal(sysio_faults_set("read:EIO:3,open:EMFILE:2:5,write:short:1:-:10,close:EINTR:4"), 0);
    assert_int_equal(sysio_armed, 1);
    int op;
    uint64_t calls, inj;
    assert_true(sysio_faults_stats(3, &op, &calls, &inj));
    assert_int_equal(op, SYSIO_CLOSE);
    assert_false(sysio_faults_stats(4, &op, &calls, &inj));
    assert_int_equal(sysio_faults_set(NULL), 0);
    assert_int_equal(sysio_armed, 0);
    assert_false(sysio_faults_stats(0, &op, &calls, &inj));
}

/* every N-th read fails, COUNT faults in all, after AFTER clean calls */
static void every_count_after(void **state)
{
    (void)state;
    js_buf_t b = {0};
    int dir = open(FIXTURES "/system", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(dir >= 0);
    assert_int_equal(sysio_faults_set("read:EIO:2:2:1"), 0);
    /* fs_read_record: one pread per file (loadavg fits the buffer) */
    int rc[8];
    for (int i = 0; i < 8; i++)
        rc[i] = fs_read_record(dir, "loadavg", &b);
    /* calls 1 (after), 2 ok, 3 fails, 4 ok, 5 fails, then the rule is spent */
    static const int want[8] = {0, 0, -EIO, 0, -EIO, 0, 0, 0};
    for (int i = 0; i < 8; i++)
        assert_int_equal(rc[i], want[i]);
    int op;
    uint64_t calls, inj;
    assert_true(sysio_faults_stats(0, &op, &calls, &inj));
    assert_int_equal(op, SYSIO_READ);
    assert_int_equal(calls, 8);
    assert_int_equal(inj, 2);
    assert_int_equal(sysio_faults_injected(), 2);
    /* a failed read leaves an empty string, never stale content */
    assert_int_equal(sysio_faults_set("read:EACCES:1"), 0);
    assert_int_equal(fs_read(dir, "meminfo", &b), -EACCES);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.p, "");
    sysio_faults_set(NULL);
    buf_free(&b);
    close(dir);
}

/* EINTR is retried and a short pread continued: the reader hands back the whole file either way */
static void eintr_and_short_reads_are_whole(void **state)
{
    (void)state;
    js_buf_t ref = {0}, b = {0};
    int dir = open(FIXTURES "/system", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(dir >= 0);
    assert_int_equal(fs_read(dir, "meminfo", &ref), 0);
    assert_true(ref.len > 1000);
    static const char *const specs[] = {"read:EINTR:1:50", "read:EINTR:2", "read:short:1", "read:short:2"};
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        assert_int_equal(sysio_faults_set(specs[i]), 0);
        assert_int_equal(fs_read(dir, "meminfo", &b), 0);
        assert_int_equal(b.len, ref.len);
        assert_memory_equal(b.p, ref.p, ref.len);
        char small[64];
        ssize_t n =
            fs_read_small(dir, "loadavg", small, sizeof(small)); /* read() to end: short reads add up */
        assert_true(n > 10);
        assert_int_equal(n, (ssize_t)strlen(small));
        assert_true(sysio_faults_injected() > 0);
    }
    sysio_faults_set(NULL);
    buf_free(&ref);
    buf_free(&b);
    close(dir);
}

/* open faults: -errno from the readers; ENOENT and ESRCH keep their meaning (a vanished process) */
static void open_faults(void **state)
{
    (void)state;
    js_buf_t b = {0};
    int dir = open(FIXTURES "/system", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(dir >= 0);
    static const struct {
        const char *spec;
        int err;
    } cases[] = {{"open:EMFILE:1", -EMFILE},
                 {"open:ENOENT:1", -ENOENT},
                 {"open:EACCES:1", -EACCES},
                 {"open:EIO:1", -EIO}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(sysio_faults_set(cases[i].spec), 0);
        assert_int_equal(fs_read(dir, "stat", &b), cases[i].err);
        assert_int_equal(fs_open(dir, "stat"), cases[i].err);
    }
    /* the fault clears: the next read is whole */
    assert_int_equal(sysio_faults_set("open:EMFILE:1:1"), 0);
    assert_int_equal(fs_read(dir, "stat", &b), -EMFILE);
    assert_int_equal(fs_read(dir, "stat", &b), 0);
    assert_true(b.len > 100);
    sysio_faults_set(NULL);
    buf_free(&b);
    close(dir);
}

/* A scratch directory with a FIFO, a file, and PID-like and other entries. */
static int scratch(char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/jobscope-sysio-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return -1;
    static const char *const dirs[] = {"1",    "42",  "42/task", "42/task/42", "42/task/43", "01",
                                       "self", "net", "3x",      "2147483647", "2147483648", "99999999999"};
    char p[PATH_MAX];
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, dirs[i]);
        if (mkdir(p, 0755) < 0)
            return -1;
    }
    snprintf(p, sizeof(p), "%s/fifo", dir);
    if (mkfifo(p, 0644) < 0)
        return -1;
    snprintf(p, sizeof(p), "%s/7", dir); /* a file named like a PID is listed too: the caller reads it */
    FILE *f = fopen(p, "w");
    if (!f)
        return -1;
    fputs("x", f);
    fclose(f);
    return 0;
}

static void scratch_remove(const char *dir)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

/* the PID iterator: numeric names from 1 to INT32_MAX only, a thread listing, a missing directory */
static void pid_iterator(void **state)
{
    (void)state;
    char dir[PATH_MAX];
    assert_int_equal(scratch(dir, sizeof(dir)), 0);
    int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(root >= 0);
    js_pid_iter_t it;
    assert_int_equal(pid_iter_open(&it, root, "."), 0);
    assert_true(pid_iter_fd(&it) >= 0);
    int64_t sum = 0;
    int n = 0;
    for (int32_t pid; (pid = pid_iter_next(&it));) {
        sum += pid;
        n++;
    }
    assert_int_equal(pid_iter_next(&it), 0); /* stays at the end */
    pid_iter_close(&it);
    pid_iter_close(&it);    /* twice is fine */
    assert_int_equal(n, 4); /* 1, 7, 42, 2147483647 */
    assert_int_equal(sum, 1 + 7 + 42 + (int64_t)INT32_MAX);
    assert_int_equal(pid_iter_open(&it, root, "42/task"), 0);
    sum = 0;
    for (int32_t tid; (tid = pid_iter_next(&it));)
        sum += tid;
    pid_iter_close(&it);
    assert_int_equal(sum, 42 + 43);
    assert_int_equal(pid_iter_open(&it, root, "4242/task"), -ENOENT);
    assert_int_equal(pid_iter_next(&it), 0);
    pid_iter_close(&it);
    /* a directory open passes through fault injection */
    assert_int_equal(sysio_faults_set("open:EMFILE:1:1"), 0);
    assert_int_equal(pid_iter_open(&it, root, "."), -EMFILE);
    assert_int_equal(pid_iter_open(&it, root, "."), 0);
    pid_iter_close(&it);
    sysio_faults_set(NULL);
    close(root);
    scratch_remove(dir);
}

/* nothing in the path module waits on a FIFO: a file open refuses it, a directory open refuses it, an output
 * file refuses it (each returns at once: a blocking open would hang this test) */
static void fifo_never_blocks(void **state)
{
    (void)state;
    char dir[PATH_MAX], p[PATH_MAX + 8];
    assert_int_equal(scratch(dir, sizeof(dir)), 0);
    int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(root >= 0);
    assert_int_equal(fs_open(root, "fifo"), -EINVAL);
    assert_int_equal(fs_open_dir(root, "fifo", false), -ENOTDIR);
    DIR *d = (DIR *)1;
    assert_int_equal(fs_opendir(root, "fifo", &d), -ENOTDIR);
    assert_null(d);
    int fd = fs_open_dir(root, "42", true);
    assert_true(fd >= 0);
    close(fd);
    snprintf(p, sizeof(p), "%s/fifo", dir);
    assert_int_equal(fs_create(p, O_WRONLY | O_TRUNC, 0644), -EINVAL);
    /* an output file, and a copy of it that refuses to replace anything */
    snprintf(p, sizeof(p), "%s/out", dir);
    fd = fs_create(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    assert_true(fd >= 0);
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    assert_int_equal(write(fd, "hello", 5), 5);
    close(fd);
    char q[PATH_MAX + 8];
    snprintf(q, sizeof(q), "%s/copy", dir);
    assert_int_equal(fs_copy(p, q, 0600, true), 0);
    char got[16] = {0};
    assert_int_equal(fs_read_small(root, "copy", got, sizeof(got)), 5);
    assert_string_equal(got, "hello");
    assert_int_equal(fs_copy(p, q, 0600, false), -EEXIST);
    snprintf(p, sizeof(p), "%s/fifo", dir);
    snprintf(q, sizeof(q), "%s/copy2", dir);
    assert_int_equal(fs_copy(p, q, 0600, false), -EINVAL);
    assert_int_equal(faccessat(root, "copy2", F_OK, 0), -1); /* nothing left behind */
    close(root);
    scratch_remove(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spec_syntax),
        cmocka_unit_test(every_count_after),
        cmocka_unit_test(eintr_and_short_reads_are_whole),
        cmocka_unit_test(open_faults),
        cmocka_unit_test(pid_iterator),
        cmocka_unit_test(fifo_never_blocks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
