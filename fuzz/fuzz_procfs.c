/* SPDX-License-Identifier: MIT
 *
 * libFuzzer target: the parsers of /proc/<pid> files and of the small /proc and /sys formats. The first byte
 * picks the parser, the rest is the file's text: parse_u64/parse_i64/kv_u64 (src/sys/parse.c),
 * /proc/<pid>/stat, io, statm, status, smaps_rollup, schedstat, cmdline (to JSON), a mountinfo line
 * (cgroupfs), a sysfs integer, CPU lists (sysattr and perf), and a GPU selection (--gpus,
 * CUDA_VISIBLE_DEVICES).
 */
#include "fuzz.h"

#include "core/json.h"
#include "core/jsoncheck.h"
#include "sources/gpu_select.h"
#include "sources/perf.h"
#include "sources/proc_tree.h"
#include "sources/schedstat.h"
#include "sys/cgroupfs.h"
#include "sys/parse.h"
#include "sys/sysattr.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned which = data[0] % 14;
    char *t = fuzz_text(data + 1, size - 1);
    size_t len = size - 1;
    switch (which) {
    case 0: {
        const char *p = t;
        uint64_t u;
        while (parse_u64(&p, &u) == 0 && *p)
            p++;
        p = t;
        int64_t i;
        while (parse_i64(&p, &i) == 0 && *p)
            p++;
        break;
    }
    case 1: {
        uint64_t v;
        kv_u64(t, "VmHWM:", &v);
        kv_u64(t, "", &v);
        break;
    }
    case 2: {
        js_pid_stat_t st;
        if (parse_pid_stat(t, &st) == 0)
            FUZZ_CHECK(strlen(st.comm) < sizeof(st.comm));
        break;
    }
    case 3: {
        js_pid_io_t io;
        proc_parse_io(t, &io);
        break;
    }
    case 4: {
        uint64_t a, b;
        proc_parse_statm(t, &a, &b);
        break;
    }
    case 5: {
        js_pid_status_t st;
        proc_parse_status(t, &st);
        break;
    }
    case 6: {
        js_pid_smaps_t sm;
        proc_parse_smaps_rollup(t, &sm);
        break;
    }
    case 7: {
        js_schedstat_t ss;
        proc_parse_schedstat(t, &ss);
        break;
    }
    case 8: { /* cmdline: raw bytes with NULs; the JSON made of it must be valid JSON */
        js_buf_t b = {0};
        if (proc_cmdline_json(t, len, &b) == 0 && b.p)
            FUZZ_CHECK(json_valid(b.p, b.len));
        buf_free(&b);
        break;
    }
    case 9: {
        int version;
        unsigned ctrls;
        char root[256], mount[256];
        if (cgroupfs_parse_mountinfo_line(t, &version, &ctrls, root, mount, sizeof(root)) == 0)
            FUZZ_CHECK(strlen(root) < sizeof(root) && strlen(mount) < sizeof(mount));
        break;
    }
    case 10: {
        int64_t v;
        sysattr_parse_i64(t, &v);
        break;
    }
    case 11: {
        uint64_t set[4];
        cpulist_parse(t, set, 256);
        break;
    }
    case 12: {
        int cpus[64];
        int n = cpulist_parse_ints(t, cpus, 64);
        for (int i = 0; i < n && i < 64; i++)
            FUZZ_CHECK(cpus[i] >= 0);
        break;
    }
    case 13: {
        gpu_sel_t sel;
        gpu_select_parse(t, "fuzz", &sel);
        break;
    }
    }
    free(t);
    return 0;
}
