/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the Prometheus exposition (src/sinks/prometheus.c), the endpoint's address parsing and HTTP
 * behaviour (src/sinks/http.c, on a loopback port chosen by the kernel), the textfile sink and the SLURM job
 * scan (src/core/jobs.c) on the cgroup v1 and v2 fixture trees under tests/fixtures/slurm/. Expositions are
 * compared line by line: family names and unit conversion from the descriptors, `_total` for counters in
 * both formats, label and HELP escaping (invalid UTF-8 included), a missing value omitting its series (never
 * 0), a family with no value having no HELP/TYPE either, OpenMetrics' UNIT and `# EOF`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/jobs.h"
#include "core/json.h"
#include "core/source.h"
#include "sinks/http.h"
#include "sinks/prometheus.h"
#include "sinks/textfile.h"
#include "sources/self.h"
#include "sources/registry.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLURM FIXTURES "/slurm"

/* ---- names ---- */

static const js_column_t name_cols[] = {
    {"user_s", "s", JS_REAL, JS_COUNTER, 0, "u"},
    {"system_s", "s", JS_REAL, JS_COUNTER, 0, "s"},
    {"cpu_s", "s", JS_REAL, JS_COUNTER, 0, "total"},
    {"rss_bytes", "bytes", JS_INT, JS_GAUGE, 0, "rss"},
    {"rss_sum_bytes", "bytes", JS_INT, JS_GAUGE, 0, "rss sum"},
    {"memory_bytes", "bytes", JS_INT, JS_GAUGE, 0, "the headline"},
    {"utime_ticks", "ticks", JS_INT, JS_COUNTER, 64, "t"},
    {"wait_us", "us", JS_INT, JS_GAUGE, 0, "w"},
    {"busy_ns", "ns", JS_INT, JS_COUNTER, 64, "n"},
    {"energy_uj", "uJ", JS_INT, JS_COUNTER, 32, "e"},
    {"freq_mhz", "MHz", JS_REAL, JS_GAUGE, 0, "f"},
    {"util_fraction", "fraction", JS_REAL, JS_GAUGE, 0, "x"},
    {"util_percent", "percent", JS_REAL, JS_GAUGE, 0, "p"},
    {"cpu3_util_fraction", "fraction", JS_REAL, JS_GAUGE, 0, "c3"},
    {"net_eth0.100_rx_bytes_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0, "n"},
    {"interval_count", "events", JS_REAL, JS_GAUGE, 0, "i"},
    {"requests_total", "count", JS_INT, JS_COUNTER, 64, "r"},
    {"comm", "text", JS_TEXT, JS_GAUGE, 0, "c"},
    {"pid", "count", JS_INT, JS_LABEL, 0, "p"},
    {"read_chars_per_s", "bytes/s", JS_REAL, JS_GAUGE, 0, "r"},
    {"temp_millicelsius", "millicelsius", JS_INT, JS_GAUGE, 0, "t"},
};
static const js_table_t name_tree = {"tree", "t", sizeof(name_cols) / sizeof(name_cols[0]), name_cols};
static const js_table_t name_gpu = {"gpu", "g", sizeof(name_cols) / sizeof(name_cols[0]), name_cols};

static void expect_family(const js_table_t *t, const char *prefix, const char *column, const char *name,
                          bool counter, double scale, const char *lname, const char *lvalue)
{
    int c = table_column(t, column);
    assert_true(c >= 0);
    prom_family_t f;
    prom_family(prefix, t, (size_t)c, &f);
    assert_false(f.skip);
    assert_string_equal(f.name, name);
    assert_int_equal(f.counter, counter);
    assert_true(fabs(f.scale - scale) <= 1e-12 * fabs(scale));
    if (lname) {
        assert_non_null(f.lname);
        assert_string_equal(f.lname, lname);
        assert_string_equal(f.lvalue, lvalue);
    } else {
        assert_null(f.lname);
    }
}

static void test_family_names(void **state)
{
    (void)state;
    /* the conventional names: the tree's CPU by mode, its RSS as memory */
    expect_family(&name_tree, "", "user_s", "jobscope_cpu_seconds", true, 1, "mode", "user");
    expect_family(&name_tree, "", "system_s", "jobscope_cpu_seconds", true, 1, "mode", "system");
    expect_family(&name_tree, "", "memory_bytes", "jobscope_memory_bytes", false, 1, NULL, NULL);
    expect_family(&name_tree, "", "rss_sum_bytes", "jobscope_memory_rss_sum_bytes", false, 1, NULL, NULL);
    prom_family_t f;
    prom_family("", &name_tree, (size_t)table_column(&name_tree, "cpu_s"), &f);
    assert_true(f.skip); /* the sum of the mode split */
    /* elsewhere the generic rule: prefix, stem, base unit, scale */
    expect_family(&name_gpu, "gpu", "user_s", "jobscope_gpu_user_seconds", true, 1, NULL, NULL);
    expect_family(&name_gpu, "gpu", "rss_bytes", "jobscope_gpu_rss_bytes", false, 1, NULL, NULL);
    expect_family(&name_gpu, "gpu", "utime_ticks", "jobscope_gpu_utime_seconds", true,
                  1.0 / (double)sysconf(_SC_CLK_TCK), NULL, NULL);
    expect_family(&name_gpu, "gpu", "wait_us", "jobscope_gpu_wait_seconds", false, 1e-6, NULL, NULL);
    expect_family(&name_gpu, "gpu", "busy_ns", "jobscope_gpu_busy_seconds", true, 1e-9, NULL, NULL);
    expect_family(&name_gpu, "gpu", "energy_uj", "jobscope_gpu_energy_joules", true, 1e-6, NULL, NULL);
    expect_family(&name_gpu, "gpu", "freq_mhz", "jobscope_gpu_freq_hertz", false, 1e6, NULL, NULL);
    expect_family(&name_gpu, "gpu", "util_fraction", "jobscope_gpu_util_ratio", false, 1, NULL, NULL);
    expect_family(&name_gpu, "gpu", "util_percent", "jobscope_gpu_util_ratio", false, 0.01, NULL, NULL);
    expect_family(&name_gpu, "gpu", "temp_millicelsius", "jobscope_gpu_temp_celsius", false, 1e-3, NULL,
                  NULL);
    expect_family(&name_gpu, "gpu", "read_chars_per_s", "jobscope_gpu_read_chars_bytes_per_second", false, 1,
                  NULL, NULL);
    /* one column per device: one family, the device a label */
    expect_family(&name_gpu, "system", "cpu3_util_fraction", "jobscope_system_percpu_util_ratio", false, 1,
                  "cpu", "3");
    expect_family(&name_gpu, "system", "net_eth0.100_rx_bytes_per_s",
                  "jobscope_system_net_rx_bytes_per_second", false, 1, "device", "eth0.100");
    /* _count belongs to summaries; a counter's name gets _total once */
    expect_family(&name_gpu, "perf", "interval_count", "jobscope_perf_interval", false, 1, NULL, NULL);
    expect_family(&name_gpu, "x", "requests_total", "jobscope_x_requests", true, 1, NULL, NULL);
    /* a view named like its column's stem is not repeated */
    static const js_column_t ecol[] = {{"energy_j", "J", JS_REAL, JS_COUNTER, 0, "e"}};
    static const js_table_t energy = {"gpu", "e", 1, ecol};
    expect_family(&energy, "gpu", "energy_j", "jobscope_gpu_energy_joules", true, 1, NULL, NULL);
    static const js_table_t energy2 = {"energy", "e", 1, ecol};
    expect_family(&energy2, "energy", "energy_j", "jobscope_energy_joules", true, 1, NULL, NULL);
    /* labels and text are not families */
    prom_family("gpu", &name_gpu, (size_t)table_column(&name_gpu, "comm"), &f);
    assert_true(f.skip);
    prom_family("gpu", &name_gpu, (size_t)table_column(&name_gpu, "pid"), &f);
    assert_true(f.skip);
}

/* ---- rendering ---- */

enum { T_DEV, T_ID, T_NOTE, T_BYTES, T_SECS, T_RATIO, T__MAX };
static const js_column_t tcols[T__MAX] = {
    [T_DEV] = {"dev", "text", JS_TEXT, JS_LABEL, 0, "device"},
    [T_ID] = {"id", "id", JS_INT, JS_LABEL, 0, "index"},
    [T_NOTE] = {"note", "text", JS_TEXT, JS_GAUGE, 0, "free text"},
    [T_BYTES] = {"used_bytes", "bytes", JS_INT, JS_GAUGE, 0, "memory \"used\" \\ now\nsecond line"},
    [T_SECS] = {"busy_us", "us", JS_INT, JS_COUNTER, 64, "busy time"},
    [T_RATIO] = {"load_fraction", "fraction", JS_REAL, JS_GAUGE, 0, "load"},
};
static const js_table_t ttable = {"dev", "devices", T__MAX, tcols};

static void fill_rows(js_rows_t *r)
{
    rows_init(r, &ttable);
    js_value_t *v = rows_add(r);
    assert_non_null(v);
    const char dev[] = "a\"b\\c\nd\xff";
    assert_int_equal(rows_set_str(r, &v[T_DEV], dev, sizeof(dev) - 1), 0);
    val_int(&v[T_ID], 0);
    assert_int_equal(rows_set_str(r, &v[T_NOTE], "caf\xc3\xa9", 5), 0);
    val_int(&v[T_BYTES], 1024);
    val_int(&v[T_SECS], 2500000);
    val_real(&v[T_RATIO], NAN); /* present but NaN: missing */
    v = rows_add(r);
    assert_non_null(v);
    assert_int_equal(rows_set_str(r, &v[T_DEV], "x", 1), 0);
    /* id and note missing: empty labels; bytes missing: no series */
    val_int(&v[T_SECS], 7);
}

static char *render_table(prom_format_t fmt, const prom_cfg_t *cfg)
{
    js_rows_t r;
    fill_rows(&r);
    js_buf_t b = {0};
    assert_int_equal(prom_render_table(&b, fmt, cfg, "dev", &ttable, &r, NULL, 0), 0);
    assert_int_equal(prom_render_end(&b, fmt), 0);
    rows_free(&r);
    assert_int_equal(buf_append(&b, "", 0), 0);
    return b.p;
}

static void test_render_text(void **state)
{
    (void)state;
    prom_cfg_t cfg = {.nlabels = 2, .labels = {{"host", "n1"}, {"dev", "shadowed by the column"}}};
    char *t = render_table(PROM_TEXT, &cfg);
    const char *want = "# HELP jobscope_dev_used_bytes memory \"used\" \\\\ now\\nsecond line\n"
                       "# TYPE jobscope_dev_used_bytes gauge\n"
                       "jobscope_dev_used_bytes{host=\"n1\",dev=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",id=\"0\","
                       "note=\"caf\xc3\xa9\"} 1024\n"
                       "# HELP jobscope_dev_busy_seconds_total busy time\n"
                       "# TYPE jobscope_dev_busy_seconds_total counter\n"
                       "jobscope_dev_busy_seconds_total{host=\"n1\",dev=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",id="
                       "\"0\",note=\"caf\xc3\xa9\"} 2.5\n"
                       "jobscope_dev_busy_seconds_total{host=\"n1\",dev=\"x\",id=\"\",note=\"\"} 7e-06\n";
    assert_string_equal(t, want); /* load_fraction: NaN everywhere, so no family at all */
    free(t);
}

static void test_render_openmetrics(void **state)
{
    (void)state;
    prom_cfg_t cfg = {0};
    char *t = render_table(PROM_OPENMETRICS, &cfg);
    const char *want =
        "# HELP jobscope_dev_used_bytes memory \\\"used\\\" \\\\ now\\nsecond line\n"
        "# TYPE jobscope_dev_used_bytes gauge\n"
        "# UNIT jobscope_dev_used_bytes bytes\n"
        "jobscope_dev_used_bytes{dev=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",id=\"0\",note=\"caf\xc3\xa9\"} 1024\n"
        "# HELP jobscope_dev_busy_seconds busy time\n"
        "# TYPE jobscope_dev_busy_seconds counter\n"
        "# UNIT jobscope_dev_busy_seconds seconds\n"
        "jobscope_dev_busy_seconds_total{dev=\"a\\\"b\\\\c\\nd\xef\xbf\xbd\",id=\"0\",note=\"caf\xc3\xa9\"} "
        "2.5\n"
        "jobscope_dev_busy_seconds_total{dev=\"x\",id=\"\",note=\"\"} 7e-06\n"
        "# EOF\n";
    assert_string_equal(t, want);
    free(t);
}

static void test_render_rowsel(void **state)
{
    (void)state;
    js_rows_t r;
    fill_rows(&r);
    js_buf_t b = {0};
    prom_cfg_t cfg = {0};
    size_t sel[] = {1};
    assert_int_equal(prom_render_table(&b, PROM_TEXT, &cfg, "dev", &ttable, &r, sel, 1), 0);
    assert_non_null(b.p);
    assert_null(strstr(b.p, "1024"));       /* row 0 left out */
    assert_null(strstr(b.p, "used_bytes")); /* and with it the only bytes value */
    assert_non_null(strstr(b.p, "dev=\"x\",id=\"\",note=\"\"} 7e-06\n"));
    size_t none = 0;
    b.len = 0;
    assert_int_equal(prom_render_table(&b, PROM_TEXT, &cfg, "dev", &ttable, &r, &none, 0), 0);
    assert_int_equal(b.len, 0);
    buf_free(&b);
    rows_free(&r);
}

/* The monitor's own series from the raw sample: collect duration and success per source, missed samples,
 * samples taken, the monitor's CPU by mode; only what is present. */
static void test_render_monitor(void **state)
{
    (void)state;
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    js_value_t *v = rows_add(sample_rows(&s, &table_samples));
    val_int(&v[SAMPLES_T_UNIX], INT64_C(1700000000500000000));
    val_int(&v[SAMPLES_MISSED], 3);
    js_rows_t *st = sample_rows(&s, &table_source_stats);
    const char *names[] = {"proc_tree", "rapl"};
    const int rcs[] = {0, -13};
    for (int i = 0; i < 2; i++) {
        v = rows_add(st);
        rows_set_str(st, &v[STATS_SOURCE], names[i], strlen(names[i]));
        val_int(&v[STATS_DURATION], 1500 * (i + 1));
        val_int(&v[STATS_RC], rcs[i]);
    }
    js_rows_t *self = sample_rows(&s, &table_self);
    v = rows_add(self);
    val_int(&v[SELF_UTIME], 250000);
    val_int(&v[SELF_STIME], 125000);
    val_int(&v[SELF_RSS], 4096);
    prom_cfg_t cfg = {.nlabels = 1, .labels = {{"host", "h"}}};
    for (int f = 0; f < PROM_FORMAT_MAX; f++) {
        js_buf_t b = {0};
        assert_int_equal(prom_render(&b, (prom_format_t)f, &cfg, NULL, &s, 41), 0);
        const char *lines[] = {
            "jobscope_samples_total{host=\"h\"} 42\n",
            "jobscope_samples_missed_total{host=\"h\"} 3\n",
            "jobscope_sample_timestamp_seconds{host=\"h\"} 1700000000.5\n",
            "jobscope_source_collect_duration_seconds{host=\"h\",source=\"proc_tree\"} 1.5e-06\n",
            "jobscope_source_collect_duration_seconds{host=\"h\",source=\"rapl\"} 3e-06\n",
            "jobscope_source_collect_success{host=\"h\",source=\"proc_tree\"} 1\n",
            "jobscope_source_collect_success{host=\"h\",source=\"rapl\"} 0\n",
            "jobscope_monitor_cpu_seconds_total{host=\"h\",mode=\"user\"} 0.25\n",
            "jobscope_monitor_cpu_seconds_total{host=\"h\",mode=\"system\"} 0.125\n",
            "jobscope_monitor_rss_bytes{host=\"h\"} 4096\n",
        };
        for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
            if (!strstr(b.p, lines[i]))
                fail_msg("format %d: missing %s in\n%s", f, lines[i], b.p);
        assert_null(strstr(b.p, "monitor_maxrss")); /* not read this sample: no series */
        bool eof = b.len >= 6 && strcmp(b.p + b.len - 6, "# EOF\n") == 0;
        assert_int_equal(eof, f == PROM_OPENMETRICS);
        buf_free(&b);
    }
    sample_free(&s);
}

static void test_accept(void **state)
{
    (void)state;
    assert_int_equal(prom_accept(NULL), PROM_TEXT);
    assert_int_equal(prom_accept("*/*"), PROM_TEXT);
    assert_int_equal(prom_accept("text/plain"), PROM_TEXT);
    /* what Prometheus 2.42 sends */
    assert_int_equal(prom_accept("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
                                 "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"),
                     PROM_OPENMETRICS);
    assert_int_equal(prom_accept("application/openmetrics-text; version=1.0.0"), PROM_OPENMETRICS);
    assert_int_equal(prom_accept("application/openmetrics-text;q=0, text/plain"), PROM_TEXT);
    assert_int_equal(prom_accept("text/plain;q=0.9, Application/OpenMetrics-Text;q=0.4"), PROM_TEXT);
    assert_int_equal(prom_accept("text/html, application/openmetrics-text;q=0.2"), PROM_OPENMETRICS);
}

/* ---- the endpoint ---- */

static void test_parse_listen(void **state)
{
    (void)state;
    struct sockaddr_storage ss;
    size_t len;
    bool lo;
    struct {
        const char *spec;
        int family;
        bool loopback;
        unsigned port;
    } ok[] = {
        {"9464", AF_INET, true, 9464},          {":9464", AF_INET, true, 9464},
        {"localhost:80", AF_INET, true, 80},    {"127.0.0.2:1", AF_INET, true, 1},
        {"0.0.0.0:9464", AF_INET, false, 9464}, {"10.1.2.3:9464", AF_INET, false, 9464},
        {"[::1]:9464", AF_INET6, true, 9464},   {"[::]:9464", AF_INET6, false, 9464},
        {"127.0.0.1:0", AF_INET, true, 0},
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        lo = !ok[i].loopback;
        if (http_parse_listen(ok[i].spec, &ss, &len, &lo) != 0)
            fail_msg("%s rejected", ok[i].spec);
        assert_int_equal(ss.ss_family, ok[i].family);
        assert_int_equal(lo, ok[i].loopback);
        unsigned port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
                                                      : ((struct sockaddr_in6 *)&ss)->sin6_port);
        assert_int_equal(port, ok[i].port);
    }
    const char *bad[] = {"",           "host:80",    "::1:80", "1.2.3.4:",    "1.2.3.4:65536",
                         "1.2.3.4:-1", "[::1]9464",  "[::1]:", "1.2.3.4:80x", "example.org:80",
                         ":",          "1.2.3.4:+80"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (http_parse_listen(bad[i], &ss, &len, &lo) != -EINVAL)
            fail_msg("'%s' accepted", bad[i]);
}

/* http_get: send `request` to 127.0.0.1:port, return the whole answer (free it). */
static char *http_get(unsigned port, const char *request)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    size_t n = strlen(request);
    assert_int_equal(write(fd, request, n), (ssize_t)n);
    js_buf_t b = {0};
    char chunk[4096];
    ssize_t k;
    while ((k = read(fd, chunk, sizeof(chunk))) > 0)
        assert_int_equal(buf_append(&b, chunk, (size_t)k), 0);
    close(fd);
    assert_int_equal(buf_append(&b, "", 0), 0);
    return b.p;
}

static void expect_status(unsigned port, const char *request, const char *status)
{
    char *r = http_get(port, request);
    if (strncmp(r, status, strlen(status)) != 0)
        fail_msg("%s -> %.60s, expected %s", request, r, status);
    free(r);
}

static void test_http_endpoint(void **state)
{
    (void)state;
    char dir[] = "/tmp/js-prom-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char token[64];
    snprintf(token, sizeof(token), "%s/token", dir);
    FILE *f = fopen(token, "w");
    fputs("s3cret\nignored second line\n", f);
    fclose(f);
    prom_cfg_t cfg = {.nlabels = 1, .labels = {{"host", "h"}}};
    http_opts_t o = {.listen = "127.0.0.1:0", .token_file = token, .prom = &cfg};
    js_http_t *h = NULL;
    char err[256];
    assert_int_equal(http_start(&o, &h, err, sizeof(err)), 0);
    unsigned port = http_port(h);
    assert_true(port > 0);
    const char *get =
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nConnection: close\r\n\r\n";
    expect_status(port, get, "HTTP/1.1 503"); /* no sample yet */
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    js_value_t *v = rows_add(sample_rows(&s, &table_samples));
    val_int(&v[SAMPLES_MISSED], 0);
    js_sink_sample_t ev = {.seq = 6, .sample = &s};
    assert_int_equal(sink_http.sample(h, &ev), 0);
    assert_true(cfg.render_s > 0);
    char *r = http_get(port, get);
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_non_null(strstr(r, "Content-Type: text/plain; version=0.0.4; charset=utf-8"));
    assert_non_null(strstr(r, "\r\n\r\n# HELP jobscope_build_info"));
    assert_non_null(strstr(r, "jobscope_samples_total{host=\"h\"} 7\n"));
    free(r);
    r = http_get(
        port,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: bearer s3cret\r\n"
        "Accept: application/openmetrics-text;version=1.0.0,text/plain;q=0.5\r\nConnection: close\r\n\r\n");
    assert_non_null(strstr(r, "Content-Type: application/openmetrics-text; version=1.0.0; charset=utf-8"));
    assert_non_null(strstr(r, "# EOF\n"));
    free(r);
    r = http_get(
        port,
        "HEAD /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nConnection: close\r\n\r\n");
    assert_non_null(strstr(r, "HTTP/1.1 200"));
    assert_null(strstr(r, "# HELP")); /* no body */
    free(r);
    assert_int_equal(http_scrapes(h), 3);
    /* a newer sample replaces the snapshot */
    ev.seq = 99;
    assert_int_equal(sink_http.sample(h, &ev), 0);
    r = http_get(port, get);
    assert_non_null(strstr(r, "jobscope_samples_total{host=\"h\"} 100\n"));
    free(r);
    /* authentication, methods, paths */
    expect_status(port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 401");
    expect_status(
        port, "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cre\r\nConnection: close\r\n\r\n",
        "HTTP/1.1 401");
    expect_status(
        port,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret2\r\nConnection: close\r\n\r\n",
        "HTTP/1.1 401");
    expect_status(port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                  "HTTP/1.1 405");
    expect_status(port, "DELETE / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 405");
    expect_status(port, "GET /metrics/x HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 404");
    expect_status(port, "GET /../etc/passwd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", "HTTP/1.1 4");
    expect_status(port,
                  "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nConnection: close\r\n\r\n",
                  "HTTP/1.1 200");
    r = http_get(port, "garbage\r\n\r\n"); /* a 400, or the connection closed */
    assert_true(r[0] == '\0' || strncmp(r, "HTTP/1.1 400", 12) == 0);
    free(r);
    assert_int_equal(http_scrapes(h), 4);
    http_stop(h);
    sample_free(&s);
    unlink(token);
    rmdir(dir);
}

static void test_http_start_errors(void **state)
{
    (void)state;
    prom_cfg_t cfg = {0};
    js_http_t *h = NULL;
    char err[256];
    http_opts_t o = {.listen = "example.org:80", .prom = &cfg};
    assert_int_equal(http_start(&o, &h, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "invalid listen address"));
    o = (http_opts_t){.listen = "127.0.0.1:0", .tls_cert = "/nonexistent.pem", .prom = &cfg};
    assert_int_equal(http_start(&o, &h, err, sizeof(err)), -EINVAL); /* a key is missing */
    o = (http_opts_t){.listen = "127.0.0.1:0", .token_file = "/nonexistent/token", .prom = &cfg};
    assert_int_equal(http_start(&o, &h, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/token"));
    /* a user without a password is refused (an empty password would let anyone in as that user) */
    char creds[] = "/tmp/js-creds-XXXXXX";
    int cfd = mkstemp(creds);
    assert_true(cfd >= 0);
    assert_int_equal(write(cfd, "alice:wonder\nbob:\n", 19), 19);
    close(cfd);
    o = (http_opts_t){.listen = "127.0.0.1:0", .basic_auth_file = creds, .prom = &cfg};
    assert_int_equal(http_start(&o, &h, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, ":2: user bob has an empty password"));
    assert_null(h);
    unlink(creds);
    /* a port taken */
    o = (http_opts_t){.listen = "127.0.0.1:0", .prom = &cfg};
    assert_int_equal(http_start(&o, &h, err, sizeof(err)), 0);
    char spec[32];
    snprintf(spec, sizeof(spec), "127.0.0.1:%u", http_port(h));
    js_http_t *h2 = NULL;
    o.listen = spec;
    assert_int_equal(http_start(&o, &h2, err, sizeof(err)), -EADDRINUSE);
    assert_null(h2);
    http_stop(h);
    http_stop(NULL);
}

/* http_start in a child process whose libmicrohttpd comes from $JOBSCOPE_MICROHTTPD_LIBRARY = `lib` (the
 * real one, which this process may have loaded already, unloaded first): the child exits 0 when http_start
 * returns -ENOENT with an err that starts with `want`, else 1 (after printing what it got). */
static void http_start_without_library(const char *lib, const char *want)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        http_library_unload();
        setenv(HTTP_LIBRARY_ENV, lib, 1);
        prom_cfg_t cfg = {0};
        js_http_t *h = NULL;
        char err[512] = "";
        http_opts_t o = {.listen = "127.0.0.1:0", .prom = &cfg};
        int r = http_start(&o, &h, err, sizeof(err));
        bool ok = r == -ENOENT && h == NULL && strncmp(err, want, strlen(want)) == 0 && !strchr(err, '\n');
        if (!ok)
            fprintf(stderr, "http_start: %d, err \"%s\", want \"%s...\"\n", r, err, want);
        _exit(ok ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/* libmicrohttpd is loaded with dlopen by http_start: a missing library, or one without its entry points, is
 * one line of error naming it and the loader's reason. */
static void test_http_library_not_loadable(void **state)
{
    (void)state;
    http_start_without_library(
        "/nonexistent/libmicrohttpd.so.12",
        "HTTP server library libmicrohttpd.so.12 not loadable: $JOBSCOPE_MICROHTTPD_LIBRARY: "
        "/nonexistent/libmicrohttpd.so.12: cannot open shared object file");
    http_start_without_library("libm.so.6", "HTTP server library libmicrohttpd.so.12 not loadable: required "
                                            "symbol missing: MHD_start_daemon");
}

/* ---- the textfile ---- */

static void test_textfile(void **state)
{
    (void)state;
    char dir[] = "/tmp/js-prom-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof(path), "%s/jobscope.prom", dir);
    prom_cfg_t cfg = {.nlabels = 1, .labels = {{"host", "h"}}};
    js_textfile_t *t = NULL;
    char err[256];
    assert_int_equal(textfile_open(path, &cfg, &t, err, sizeof(err)), 0);
    js_sample_t s;
    assert_int_equal(sample_init(&s), 0);
    rows_add(sample_rows(&s, &table_samples));
    for (int i = 0; i < 20; i++) {
        js_sink_sample_t ev = {.seq = i, .sample = &s};
        assert_int_equal(sink_textfile.sample(t, &ev), 0);
    }
    /* stop writes the last sample, then removes the file; nothing else is left in the folder */
    char tmp[160];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    for (int i = 0; i < 200 && textfile_writes(t) == 0; i++)
        usleep(10000);
    assert_true(textfile_writes(t) >= 1);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[256];
    bool seen = false;
    while (fgets(line, sizeof(line), f))
        seen |= strncmp(line, "jobscope_samples_total{host=\"h\"} ", 33) == 0;
    fclose(f);
    assert_true(seen);
    assert_int_equal(sink_textfile.stop(t), 0);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(access(tmp, F_OK), -1);
    assert_int_equal(textfile_errors(t), 0);
    textfile_close(t);
    assert_int_equal(rmdir(dir), 0); /* empty */
    /* a folder that does not exist is reported at once */
    snprintf(path, sizeof(path), "%s/missing/jobscope.prom", dir);
    assert_int_equal(textfile_open(path, &cfg, &t, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "missing"));
    sample_free(&s);
}

/* ---- SLURM jobs ---- */

typedef struct {
    const js_rows_t *r;
    const js_value_t *v;
} row_t;

static row_t find_row(const js_rows_t *r, const char *jobid, const char *step)
{
    for (size_t i = 0; i < r->nrows; i++) {
        const js_value_t *v = rows_row(r, i);
        if (strcmp(rows_str(r, &v[JOB_ID]), jobid) != 0)
            continue;
        if (step && (r->table->ncols <= JOB_STEP || strcmp(rows_str(r, &v[JOB_STEP]), step) != 0))
            continue;
        return (row_t){r, v};
    }
    fail_msg("no row for job %s step %s", jobid, step ? step : "-");
    return (row_t){0};
}

static void expect_int(row_t x, int col, bool present, int64_t value)
{
    assert_int_equal(x.v[col].present, present);
    if (present)
        assert_int_equal(x.v[col].i, value);
}

static const char *name_of(uid_t uid, char *buf, size_t cap)
{
    struct passwd *pw = getpwuid(uid);
    if (pw)
        snprintf(buf, cap, "%s", pw->pw_name);
    else
        snprintf(buf, cap, "%u", (unsigned)uid);
    return buf;
}

static void test_jobs_v1(void **state)
{
    (void)state;
    js_fsroot_t root;
    assert_int_equal(fsroot_open(&root, SLURM "/v2-proc", SLURM "/v1"), 0);
    js_jobs_t *j = jobs_new();
    js_rows_t jobs, steps;
    rows_init(&jobs, &table_slurm_job);
    rows_init(&steps, &table_slurm_step);
    assert_int_equal(jobs_scan(j, &root, &jobs, &steps), 2);
    assert_int_equal(jobs.nrows, 2);
    assert_int_equal(steps.nrows, 2);
    char user[64];
    row_t x = find_row(&jobs, "17", NULL);
    assert_string_equal(rows_str(&jobs, &x.v[JOB_USER]), name_of(65534, user, sizeof(user)));
    assert_string_equal(rows_str(&jobs, &x.v[JOB_NODE]), "n1");
    expect_int(x, JOB_CPU, true, INT64_C(5000000000));
    expect_int(x, JOB_CPU_USER, true, INT64_C(4000000000));
    expect_int(x, JOB_CPU_SYSTEM, true, INT64_C(1000000000));
    expect_int(x, JOB_MEM, true, 104857600);
    expect_int(x, JOB_MEM_MAX, true, 209715200);
    expect_int(x, JOB_MEM_LIMIT, true, 1073741824);
    expect_int(x, JOB_RSS, true, 94371840); /* total_rss, not rss or total_rss_huge */
    expect_int(x, JOB_CACHE, true, 8388608);
    expect_int(x, JOB_CPUS, true, 5);
    x = find_row(&jobs, "5", NULL);
    assert_string_equal(rows_str(&jobs, &x.v[JOB_USER]), name_of(0, user, sizeof(user)));
    assert_string_equal(rows_str(&jobs, &x.v[JOB_NODE]), "");
    expect_int(x, JOB_CPU, true, 1000);
    expect_int(x, JOB_MEM_LIMIT, false, 0); /* unlimited: no value, never a huge number */
    expect_int(x, JOB_MEM, true, 4096);
    expect_int(x, JOB_CPU_USER, false, 0); /* not in the tree: missing, not 0 */
    expect_int(x, JOB_CPUS, false, 0);
    x = find_row(&steps, "17", "0");
    expect_int(x, JOB_CPU, true, INT64_C(3000000000));
    expect_int(x, JOB_CPUS, true, 1);
    expect_int(x, JOB_MEM, true, 94371840);
    x = find_row(&steps, "17", "batch");
    expect_int(x, JOB_CPU, true, INT64_C(2000000000));
    expect_int(x, JOB_MEM, false, 0);

    /* rendered: per job and per step, with their labels */
    prom_cfg_t cfg = {.nlabels = 1, .labels = {{"host", "h"}}};
    js_buf_t b = {0};
    assert_int_equal(prom_render_table(&b, PROM_TEXT, &cfg, "slurm_job", &table_slurm_job, &jobs, NULL, 0),
                     0);
    assert_int_equal(prom_render_table(&b, PROM_TEXT, &cfg, "slurm_step", &table_slurm_step, &steps, NULL, 0),
                     0);
    char want[256];
    snprintf(want, sizeof(want),
             "jobscope_slurm_job_cpu_seconds_total{host=\"h\",jobid=\"17\",user=\"%s\",node=\"n1\"} 5\n",
             name_of(65534, user, sizeof(user)));
    if (!strstr(b.p, want))
        fail_msg("missing %s in\n%s", want, b.p);
    snprintf(want, sizeof(want),
             "jobscope_slurm_step_memory_usage_bytes{host=\"h\",jobid=\"17\",user=\"%s\",node=\"n1\",step="
             "\"0\"} 94371840\n",
             name_of(65534, user, sizeof(user)));
    if (!strstr(b.p, want))
        fail_msg("missing %s in\n%s", want, b.p);
    assert_non_null(strstr(b.p, "# TYPE jobscope_slurm_job_memory_limit_bytes gauge\n"));
    assert_null(strstr(b.p, "jobid=\"5\",user=\"root\",node=\"\"} 9223372036854771712"));
    buf_free(&b);

    rows_free(&jobs);
    rows_free(&steps);
    jobs_free(j);
    fsroot_close(&root);
}

static void test_jobs_v2(void **state)
{
    (void)state;
    js_fsroot_t root;
    assert_int_equal(fsroot_open(&root, SLURM "/v2-proc", SLURM "/v2"), 0);
    js_jobs_t *j = jobs_new();
    js_rows_t jobs, steps;
    rows_init(&jobs, &table_slurm_job);
    rows_init(&steps, &table_slurm_step);
    assert_int_equal(jobs_scan(j, &root, &jobs, &steps), 2);
    char user[64];
    row_t x = find_row(&jobs, "42", NULL);
    assert_string_equal(rows_str(&jobs, &x.v[JOB_USER]), name_of(65534, user, sizeof(user)));
    assert_string_equal(rows_str(&jobs, &x.v[JOB_NODE]), "");
    expect_int(x, JOB_CPU, true, INT64_C(7000000000));
    expect_int(x, JOB_CPU_USER, true, INT64_C(6000000000));
    expect_int(x, JOB_CPU_SYSTEM, true, INT64_C(1000000000));
    expect_int(x, JOB_MEM, true, 52428800);
    expect_int(x, JOB_MEM_MAX, true, 62914560);
    expect_int(x, JOB_MEM_LIMIT, false, 0); /* "max" */
    expect_int(x, JOB_RSS, true, 41943040);
    expect_int(x, JOB_CACHE, true, 10485760);
    expect_int(x, JOB_CPUS, true, 2);
    x = find_row(&jobs, "43", NULL);
    assert_string_equal(rows_str(&jobs, &x.v[JOB_NODE]), "n2");
    assert_string_equal(rows_str(&jobs, &x.v[JOB_USER]), ""); /* no task to tell */
    x = find_row(&steps, "42", "0");
    expect_int(x, JOB_MEM_LIMIT, true, 536870912);
    expect_int(x, JOB_MEM, true, 50000000);
    assert_int_equal(steps.nrows, 1);
    /* the same scanner again: the rows are replaced, not appended */
    assert_int_equal(jobs_scan(j, &root, &jobs, &steps), 2);
    assert_int_equal(jobs.nrows, 2);
    /* no SLURM cgroup at all */
    fsroot_close(&root);
    assert_int_equal(fsroot_open(&root, SLURM "/v2-proc", FIXTURES "/node"), 0);
    assert_int_equal(jobs_scan(j, &root, &jobs, &steps), 0);
    assert_int_equal(jobs.nrows, 0);
    rows_free(&jobs);
    rows_free(&steps);
    jobs_free(j);
    fsroot_close(&root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_family_names),
        cmocka_unit_test(test_render_text),
        cmocka_unit_test(test_render_openmetrics),
        cmocka_unit_test(test_render_rowsel),
        cmocka_unit_test(test_render_monitor),
        cmocka_unit_test(test_accept),
        cmocka_unit_test(test_parse_listen),
        cmocka_unit_test(test_http_endpoint),
        cmocka_unit_test(test_http_start_errors),
        cmocka_unit_test(test_http_library_not_loadable),
        cmocka_unit_test(test_textfile),
        cmocka_unit_test(test_jobs_v1),
        cmocka_unit_test(test_jobs_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
