/* SPDX-License-Identifier: MIT
 *
 * The PID map (src/core/pidmap.c) against a plain array indexed by PID: runs of consecutive PIDs (how a job's
 * processes come), PIDs that differ by multiples of the table's size (the same home slot), deletions that
 * shift entries back, growth, and a walk over every slot that sees each live entry exactly once with its
 * value intact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/pidmap.h"

#include <stdlib.h>
#include <string.h>

#define PID_RANGE (1 << 16)

typedef struct {
    int32_t pid;
    uint64_t tag;
    char pad[40]; /* a value larger than a key, as the real ones are */
} val_t;

/* check_all: the map holds exactly the PIDs marked in `ref`, each with its tag. */
static void check_all(const js_pidmap_t *m, const uint64_t *ref)
{
    size_t live = 0;
    for (int32_t pid = 1; pid < PID_RANGE; pid++) {
        const val_t *v = pidmap_get(m, pid);
        if (ref[pid]) {
            assert_non_null(v);
            assert_int_equal(v->pid, pid);
            assert_int_equal(v->tag, ref[pid]);
            live++;
        } else {
            assert_null(v);
        }
    }
    assert_int_equal(m->count, live);
    size_t walked = 0;
    for (size_t i = 0; i < m->cap; i++) {
        void *p;
        int32_t pid = pidmap_at(m, i, &p);
        if (!pid)
            continue;
        assert_true(pid > 0 && pid < PID_RANGE);
        assert_int_equal(((val_t *)p)->pid, pid);
        assert_int_equal(((val_t *)p)->tag, ref[pid]);
        walked++;
    }
    assert_int_equal(walked, live);
}

static void put(js_pidmap_t *m, uint64_t *ref, int32_t pid, uint64_t tag)
{
    int fresh = -1;
    val_t *v = pidmap_put(m, pid, &fresh);
    assert_non_null(v);
    assert_int_equal(fresh, ref[pid] ? 0 : 1);
    if (fresh) {
        for (size_t i = 0; i < sizeof(*v); i++)
            assert_int_equal(((unsigned char *)v)[i], 0); /* inserted zeroed */
    }
    v->pid = pid;
    v->tag = tag;
    ref[pid] = tag;
}

static void test_runs_and_collisions(void **state)
{
    (void)state;
    uint64_t *ref = calloc(PID_RANGE, sizeof(*ref));
    assert_non_null(ref);
    js_pidmap_t m;
    pidmap_init(&m, sizeof(val_t));
    assert_null(pidmap_get(&m, 5));
    pidmap_del(&m, 5); /* empty: nothing happens */
    uint64_t tag = 1;
    for (int32_t pid = 3000; pid < 4000; pid++) /* a job forked in a row */
        put(&m, ref, pid, tag++);
    check_all(&m, ref);
    for (int32_t k = 1; k < 15; k++) /* the same home slot as 3000..3015, whatever the size */
        put(&m, ref, 3000 + k * 4096, tag++);
    put(&m, ref, 3500, tag++); /* present: its value kept, not zeroed */
    check_all(&m, ref);
    for (int32_t pid = 3000; pid < 4000; pid += 3) { /* every third leaves: entries shift back */
        pidmap_del(&m, pid);
        ref[pid] = 0;
    }
    for (int32_t k = 1; k < 15; k += 2) {
        pidmap_del(&m, 3000 + k * 4096);
        ref[3000 + k * 4096] = 0;
    }
    pidmap_del(&m, 12345); /* absent */
    check_all(&m, ref);
    pidmap_free(&m);
    pidmap_free(&m); /* twice: an empty map */
    free(ref);
}

static void test_random_ops(void **state)
{
    (void)state;
    uint64_t *ref = calloc(PID_RANGE, sizeof(*ref));
    assert_non_null(ref);
    js_pidmap_t m;
    pidmap_init(&m, sizeof(val_t));
    uint64_t x = 88172645463325252ull, tag = 1;
    for (int round = 0; round < 40; round++) {
        for (int op = 0; op < 2000; op++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            /* half of the PIDs near a moving base (runs), half anywhere */
            int32_t pid = (x & 1) ? (int32_t)(1 + (round * 1500 + (x >> 8) % 3000) % (PID_RANGE - 1))
                                  : (int32_t)(1 + (x >> 8) % (PID_RANGE - 1));
            if ((x >> 40) % 3 == 0) {
                pidmap_del(&m, pid);
                ref[pid] = 0;
            } else {
                put(&m, ref, pid, tag++);
            }
        }
        check_all(&m, ref);
    }
    pidmap_free(&m);
    free(ref);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runs_and_collisions),
        cmocka_unit_test(test_random_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
