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

#include "sys/fsroot.h"
#include "sys/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

static void spec_syntax(void **state)
{
    (void)state;
    static const char *const bad[] = {"read", "read:EIO", "read:EIO:0", "read:EIO:x", "read:EBOGUS:1",
                                      "bogus:EIO:1", "open:short:1", "read:EIO:1:0", "read:EIO:1:2:3:4",
                                      "read:EIO:1,", "read:EIO:-1", "read:EIO:1:-:-2"};
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
        ssize_t n = fs_read_small(dir, "loadavg", small, sizeof(small)); /* read() to end: short reads add up */
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
    } cases[] = {{"open:EMFILE:1", -EMFILE}, {"open:ENOENT:1", -ENOENT}, {"open:EACCES:1", -EACCES},
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spec_syntax),
        cmocka_unit_test(every_count_after),
        cmocka_unit_test(eintr_and_short_reads_are_whole),
        cmocka_unit_test(open_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
