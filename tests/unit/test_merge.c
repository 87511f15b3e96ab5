/* SPDX-License-Identifier: MIT
 *
 * Unit tests of merged job recordings (sinks/merge.h) on synthetic node recordings (tests/synth.c, written
 * through the recorder): the merge keeps every node's rows and metadata, the nodes table holds the clock
 * offsets (each node's start minus the median start) and their bound (the spread), a node extracted back is a
 * recording every reader opens and summarises exactly as its original; and the refusals: no input, the same
 * file twice, an existing output, a merged input, another job, two recordings of one node, an incomplete
 * recording, a truncated one. Nothing is left behind by a refused merge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../synth.h"
#include "api/replay.h"
#include "model/model.h"
#include "sinks/merge.h"
#include "sinks/recording.h"
#include "sources/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char dir[64];
    char path[8][128];
} fx_t;

/* write_node: a synthetic node recording of job `job`, node `node`, started at `start_s` (unix seconds);
 * complete unless `open_end`. Returns its sample count. */
static size_t write_node(const char *path, const char *job, const char *node, unsigned k, int64_t start_s,
                         bool open_end)
{
    synth_cfg_t cfg = {.hours = 0.01, .ncpus = 4, .nprocs = 3, .node = k};
    synth_t *g = synth_new(&cfg);
    assert_non_null(g);
    js_recorder_t *w = NULL;
    char err[512];
    assert_int_equal(recorder_open(path, false, &w, err, sizeof(err)), 0);
    char v[32];
    recorder_meta(w, "mode", "job");
    recorder_meta(w, "job_id", job);
    recorder_meta(w, "job_node", node);
    recorder_meta(w, "host", node);
    recorder_meta(w, "batch_scheduler", "slurm");
    recorder_meta(w, "clk_tck", "100");
    recorder_meta(w, "interval_ns", "1000000000");
    recorder_meta(w, "cores_available", "4");
    snprintf(v, sizeof(v), "%lld", (long long)start_s * 1000000000LL);
    recorder_meta(w, "start_unix_ns", v);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    size_t n = 0;
    while (synth_next(g, &s) == 1) {
        assert_int_equal(recorder_write(w, (int64_t)n, &s), 0);
        n++;
    }
    if (!open_end) {
        snprintf(v, sizeof(v), "%lld", (long long)(start_s + 100) * 1000000000LL);
        recorder_meta(w, "stop_unix_ns", v);
    }
    sample_free(&s);
    recorder_close(w);
    synth_free(g);
    return n;
}

static double total_cpu(const char *path)
{
    js_recording_t *r = NULL;
    js_model_t *m = NULL;
    char err[512] = "";
    int rc = replay_open(path, &r, &m, NULL, NULL, err, sizeof(err));
    if (rc < 0)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    js_summary_t su;
    model_summary(m, &su);
    model_free(m);
    recording_close(r);
    return su.total_s;
}

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/jobscope-test-merge-XXXXXX");
    if (!f || !mkdtemp(f->dir))
        return -1;
    for (int i = 0; i < 8; i++)
        snprintf(f->path[i], sizeof(f->path[i]), "%s/f%d.db", f->dir, i);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    char cmd[160];
    for (int i = 0; i < 8; i++)
        unlink(f->path[i]);
    snprintf(cmd, sizeof(cmd), "%s/out.db", f->dir);
    unlink(cmd);
    snprintf(cmd, sizeof(cmd), "%s/node.db", f->dir);
    unlink(cmd);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void test_merge_and_extract(void **state)
{
    fx_t *f = *state;
    size_t n0 = write_node(f->path[0], "42", "n1", 0, 1000, false);
    size_t n1 = write_node(f->path[1], "42", "n2", 1, 1002, false);
    size_t n2 = write_node(f->path[2], "42", "n3", 2, 1001, false);
    char out[128], err[512] = "";
    snprintf(out, sizeof(out), "%s/out.db", f->dir);
    const char *in[] = {f->path[2], f->path[0], f->path[1]}; /* any order: nodes come out by name */
    assert_int_equal(merge_recordings(out, in, 3, 0, err, sizeof(err)), 0);
    assert_true(merge_is_merged(out));
    assert_false(merge_is_merged(f->path[0]));
    assert_false(merge_is_merged("/nonexistent"));
    merge_node_t *nodes = NULL;
    size_t nn = 0;
    assert_int_equal(merge_nodes(out, &nodes, &nn, err, sizeof(err)), 0);
    assert_int_equal(nn, 3);
    assert_string_equal(nodes[0].name, "n1");
    assert_string_equal(nodes[1].name, "n2");
    assert_string_equal(nodes[2].name, "n3");
    assert_int_equal(nodes[0].samples, (int64_t)n0);
    assert_int_equal(nodes[1].samples, (int64_t)n1);
    assert_int_equal(nodes[2].samples, (int64_t)n2);
    /* starts 1000, 1002, 1001 s: the median is 1001; the bound is the spread, 2 s */
    assert_int_equal(nodes[0].clock_offset_ns, -1000000000LL);
    assert_int_equal(nodes[1].clock_offset_ns, 1000000000LL);
    assert_int_equal(nodes[2].clock_offset_ns, 0);
    for (size_t i = 0; i < nn; i++)
        assert_int_equal(nodes[i].clock_offset_bound_ns, 2000000000LL);
    free(nodes);
    /* a node read back is an ordinary recording: its metadata, its samples, the same summary */
    char node[128];
    snprintf(node, sizeof(node), "%s/node.db", f->dir);
    assert_int_equal(merge_extract(out, "n2", node, err, sizeof(err)), 0);
    js_recording_t *r = NULL;
    assert_int_equal(recording_open(node, &r, err, sizeof(err)), 0);
    assert_string_equal(recording_meta(r, "job_node"), "n2");
    assert_null(recording_meta(r, "merged"));
    recording_close(r);
    double a = total_cpu(f->path[1]), b = total_cpu(node);
    assert_true(a > 0);
    assert_true(fabs(a - b) < 1e-9);
    unlink(node);
    assert_int_equal(merge_extract(out, "n9", node, err, sizeof(err)), -ENOENT);
    assert_int_equal(access(node, F_OK), -1);
}

static void test_refusals(void **state)
{
    fx_t *f = *state;
    write_node(f->path[0], "42", "n1", 0, 1000, false);
    write_node(f->path[1], "42", "n2", 1, 1000, false);
    write_node(f->path[2], "43", "n3", 0, 1000, false); /* another job */
    write_node(f->path[3], "42", "n1", 1, 1000, false); /* node n1 again */
    write_node(f->path[4], "42", "n4", 0, 1000, true);  /* incomplete */
    char out[128], err[512];
    snprintf(out, sizeof(out), "%s/out.db", f->dir);
    const char *none[] = {NULL};
    assert_int_equal(merge_recordings(out, none, 0, 0, err, sizeof(err)), -EINVAL);
    const char *same[] = {f->path[0], f->path[0]};
    assert_int_equal(merge_recordings(out, same, 2, 0, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "same file"));
    /* the same file by another name (a hard link) */
    snprintf(f->path[5], sizeof(f->path[5]), "%s/link.db", f->dir);
    assert_int_equal(link(f->path[0], f->path[5]), 0);
    const char *linked[] = {f->path[0], f->path[5]};
    assert_int_equal(merge_recordings(out, linked, 2, 0, err, sizeof(err)), -EINVAL);
    const char *other[] = {f->path[0], f->path[2]};
    assert_int_equal(merge_recordings(out, other, 2, 0, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "job 43"));
    const char *twice[] = {f->path[0], f->path[3]};
    assert_int_equal(merge_recordings(out, twice, 2, 0, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "both node n1"));
    const char *open_end[] = {f->path[0], f->path[4]};
    assert_int_equal(merge_recordings(out, open_end, 2, 0, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "incomplete"));
    /* a truncated copy */
    struct stat st;
    assert_int_equal(stat(f->path[1], &st), 0);
    snprintf(f->path[6], sizeof(f->path[6]), "%s/trunc.db", f->dir);
    int in = open(f->path[1], O_RDONLY), o = open(f->path[6], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *buf = malloc((size_t)st.st_size);
    assert_int_equal(read(in, buf, (size_t)st.st_size), st.st_size);
    assert_int_equal(write(o, buf, (size_t)st.st_size / 2), st.st_size / 2);
    free(buf);
    close(in);
    close(o);
    const char *trunc[] = {f->path[0], f->path[6]};
    assert_true(merge_recordings(out, trunc, 2, 0, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "trunc.db"));
    assert_int_equal(access(out, F_OK), -1); /* nothing left by a refusal */
    /* a merged recording is not merged again, and an output is never replaced */
    const char *good[] = {f->path[0], f->path[1]};
    assert_int_equal(merge_recordings(out, good, 2, 0, err, sizeof(err)), 0);
    assert_int_equal(merge_recordings(out, good, 2, 0, err, sizeof(err)), -EEXIST);
    snprintf(f->path[7], sizeof(f->path[7]), "%s/again.db", f->dir);
    const char *merged[] = {out, f->path[1]};
    assert_int_equal(merge_recordings(f->path[7], merged, 2, 0, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "already a merged recording"));
    assert_int_equal(access(f->path[7], F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_merge_and_extract, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
