/* SPDX-License-Identifier: MIT
 *
 * Unit tests of the tabular sinks (src/sinks/csv.c, src/sinks/jsonl.c) and of the number and string
 * formatting they share (fmt_real, json_str, json_num in src/core/json.c). Output goes to open_memstream and
 * is compared byte for byte: the CSV header, RFC 4180 quoting, a missing cell as an empty field or JSON null
 * (never 0), integers against reals (0.1 stays 0.1, 1e7 prints as 10000000, NAN is missing), and JSON
 * escaping of quotes, control bytes and invalid UTF-8. Write errors on a full device must be reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/json.h"
#include "model/summary.h"
#include "sinks/tabsink.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* run_sink: begin with `cols`, write `nrows` rows of `ncols` cells, end; returns the text (free it). */
static char *run_sink(const js_tab_sink_t *sink, const char *const *cols, size_t ncols,
                      const js_cell_t *cells, size_t nrows)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    void *st = NULL;
    assert_int_equal(sink->begin(f, cols, ncols, &st), 0);
    for (size_t r = 0; r < nrows; r++)
        assert_int_equal(sink->row(st, cells + r * ncols), 0);
    assert_int_equal(sink->end(st), 0);
    fclose(f);
    assert_non_null(text);
    return text;
}

/* json_of: json_str of `len` bytes of s, as a malloc'd string. */
static char *json_of(const char *s, size_t len)
{
    js_buf_t b = {0};
    assert_int_equal(json_str(&b, s, len), 0);
    assert_int_equal(strlen(b.p), b.len);
    return b.p;
}

static void assert_json(const char *in, size_t len, const char *want)
{
    char *got = json_of(in, len);
    bool same = strcmp(got, want) == 0;
    if (!same)
        print_message("json_str: got %s, want %s\n", got, want);
    free(got); /* before failing: a failed assertion does not return */
    assert_true(same);
}

static const char *real(double d)
{
    static char buf[64];
    return fmt_real(buf, sizeof(buf), d);
}

/* ---- fmt_real ---- */

static void test_fmt_real(void **state)
{
    (void)state;
    assert_string_equal(real(0.1), "0.1");
    assert_string_equal(real(0.5), "0.5");
    assert_string_equal(real(-2.5), "-2.5");
    assert_string_equal(real(1e7), "10000000");
    assert_string_equal(real(-1e7), "-10000000");
    assert_string_equal(real(123456789012.0), "123456789012");
    assert_string_equal(real(1.0), "1");
    assert_string_equal(real(0.0), "0");
    assert_string_equal(real(-0.0), "0");
    assert_string_equal(real(0.30000000000000004), "0.30000000000000004"); /* needs 17 digits */
    assert_string_equal(real(1.0 / 3.0), "0.3333333333333333");
    assert_string_equal(real(1234.5678), "1234.5678");
    assert_string_equal(real(1e15 + 0.5), "1000000000000000.5");
    /* no locale decimal comma, no thousands separators, nothing but a number strtod reads back */
    static const double xs[] = {0.1,
                                0.2,
                                1e-7,
                                1e-300,
                                5e-324,
                                1e21,
                                1e300,
                                -1e300,
                                9007199254740992.0,
                                -9007199254740993.0,
                                4503599627370495.5,
                                1.7976931348623157e308,
                                2.2250738585072014e-308,
                                3.14159265358979,
                                123.456,
                                1e22,
                                9.2233720368547758e18};
    for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
        const char *s = real(xs[i]);
        char *end;
        double back = strtod(s, &end);
        if (*end || back != xs[i] || strchr(s, ','))
            fail_msg("fmt_real(%.17g) = \"%s\" does not round-trip", xs[i], s);
    }
}

/* ---- CSV ---- */

static void test_csv_header_quoting(void **state)
{
    (void)state;
    static const char *const cols[] = {"pid", "comm,name", "say \"hi\"", "multi\nline"};
    js_cell_t row[4] = {cell_int(1), cell_text("a,b"), cell_text("he said \"no\""), cell_text("x\ny")};
    char *text = run_sink(&sink_csv, cols, 4, row, 1);
    /* LF line endings; a text cell's newline is escaped (one line, one row), a column name is quoted */
    assert_string_equal(text, "pid,\"comm,name\",\"say \"\"hi\"\"\",\"multi\nline\"\n"
                              "1,\"a,b\",\"he said \"\"no\"\"\",x\\ny\n");
    free(text);
}

static void test_csv_values(void **state)
{
    (void)state;
    static const char *const cols[] = {"i", "r", "t", "m"};
    js_cell_t rows[] = {
        cell_int(0),         cell_real(0.0),       cell_text(""),          cell_missing(),
        cell_int(-42),       cell_real(0.1),       cell_text("plain"),     cell_int(9223372036854775807LL),
        cell_int(10000000),  cell_real(1e7),       cell_text("cr\rhere"),  cell_missing(),
        cell_missing(),      cell_real(NAN),       cell_text(NULL),        cell_real(-0.25),
        cell_int(INT64_MIN), cell_real(2.5e-7),    cell_text("tab\there"), cell_text("'single'"),
        cell_int(7),         cell_real(1e7 + 0.5), cell_text("\"\""),      cell_text(" lead"),
    };
    char *text = run_sink(&sink_csv, cols, 4, rows, sizeof(rows) / sizeof(rows[0]) / 4);
    assert_string_equal(text, "i,r,t,m\n"
                              "0,0,,\n"
                              "-42,0.1,plain,9223372036854775807\n"
                              "10000000,10000000,cr\\rhere,\n"
                              ",,,-0.25\n" /* missing, NAN, NULL text: all empty, never 0 */
                              "-9223372036854775808,2.5e-07,tab\\there,'single'\n"
                              "7,10000000.5,\"\"\"\"\"\", lead\n");
    free(text);
}

static void test_csv_no_rows(void **state)
{
    (void)state;
    static const char *const cols[] = {"only"};
    char *text = run_sink(&sink_csv, cols, 1, NULL, 0);
    assert_string_equal(text, "only\n");
    free(text);
    assert_int_equal(sink_csv.end(NULL), 0);
}

/* ---- JSON ---- */

static void test_json_str(void **state)
{
    (void)state;
    assert_json("", 0, "\"\"");
    assert_json("plain text", 10, "\"plain text\"");
    assert_json("q\"b\\s/", 6, "\"q\\\"b\\\\s/\"");
    assert_json("a\nb\tc\rd", 7, "\"a\\nb\\tc\\rd\"");
    assert_json("\x01\x08\x0c\x1f\x7f", 5, "\"\\u0001\\u0008\\u000c\\u001f\\u007f\"");
    assert_json("nul\0in", 6, "\"nul\\u0000in\"");              /* a NUL inside the given length is data */
    assert_json("caf\xc3\xa9", 5, "\"caf\xc3\xa9\"");           /* valid 2-byte UTF-8 passes */
    assert_json("\xe2\x82\xac", 3, "\"\xe2\x82\xac\"");         /* 3-byte: euro sign */
    assert_json("\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\""); /* 4-byte: emoji */
    assert_json("bad\xff", 4, "\"bad\\u00ff\"");
    assert_json("\x80x", 2, "\"\\u0080x\"");          /* lone continuation byte */
    assert_json("\xc3", 1, "\"\\u00c3\"");            /* truncated sequence at the end */
    assert_json("\xc3(", 2, "\"\\u00c3(\"");          /* lead byte then ASCII */
    assert_json("\xe2\x82", 2, "\"\\u00e2\\u0082\""); /* 3-byte sequence cut short */
    assert_json("\xc0\xaf", 2, "\"\\u00c0\\u00af\""); /* overlong 2-byte '/' */
    assert_json("\xf5\x80\x80\x80", 4, "\"\\u00f5\\u0080\\u0080\\u0080\"");
}

/* Sequences whose lead byte is in range but whose second byte is not (RFC 3629 section 4): overlong 3- and
 * 4-byte forms, UTF-16 surrogates, code points above U+10FFFF. These are invalid UTF-8 and must be escaped,
 * or strict JSON readers reject the whole line. */
static void test_json_str_strict_utf8(void **state)
{
    (void)state;
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"\xe0\x80\xaf", "\"\\u00e0\\u0080\\u00af\""},            /* overlong '/' */
        {"\xed\xa0\x80", "\"\\u00ed\\u00a0\\u0080\""},            /* U+D800 surrogate */
        {"\xf0\x80\x80\xaf", "\"\\u00f0\\u0080\\u0080\\u00af\""}, /* overlong 4-byte */
        {"\xf4\x90\x80\x80", "\"\\u00f4\\u0090\\u0080\\u0080\""}, /* U+110000 */
        {"\xe0\xa0\x80", "\"\xe0\xa0\x80\""},                     /* U+0800: valid */
        {"\xed\x9f\xbf", "\"\xed\x9f\xbf\""},                     /* U+D7FF: valid */
        {"\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\""},             /* U+10FFFF: valid */
    };
    int bad = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = json_of(cases[i].in, strlen(cases[i].in));
        if (strcmp(got, cases[i].want) != 0) {
            print_message("json_str case %zu: got %s, want %s\n", i, got, cases[i].want);
            bad++;
        }
        free(got);
    }
    assert_int_equal(bad, 0);
}

static void test_json_num(void **state)
{
    (void)state;
    js_buf_t b = {0};
    assert_int_equal(json_num(&b, true, 0.1), 0);
    assert_int_equal(buf_append(&b, " ", 1), 0);
    assert_int_equal(json_num(&b, false, 5.0), 0);
    assert_int_equal(buf_append(&b, " ", 1), 0);
    assert_int_equal(json_num(&b, true, NAN), 0);
    assert_int_equal(buf_append(&b, " ", 1), 0);
    assert_int_equal(json_num(&b, true, INFINITY), 0);
    assert_int_equal(buf_append(&b, " ", 1), 0);
    assert_int_equal(json_num(&b, true, -INFINITY), 0);
    assert_int_equal(buf_append(&b, " ", 1), 0);
    assert_int_equal(json_num(&b, true, 1e7), 0);
    assert_string_equal(b.p, "0.1 null null null null 10000000");
    buf_free(&b);
}

/* what `jobscope info --json` writes as a number: JSON's number syntax, whole; and the inventory rows that
 * inventory_addf marks as numbers (one decimal conversion) */
static void test_json_number_text(void **state)
{
    (void)state;
    static const char *const ok[] = {"0", "-0", "12", "-12", "0.5", "1e9", "1E+09", "2.5e-3", "404273352704"};
    static const char *const bad[] = {"",    "-",   "012",  "+1", ".5",  "1.",   "1e",
                                      "inf", "nan", "0x10", "1 ", "0-1", "3.9.1"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        assert_true(json_number_text(ok[i]));
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(json_number_text(bad[i]));
    js_rows_t inv;
    rows_init(&inv, &table_inventory);
    assert_int_equal(inventory_addf(&inv, "t", "count", "%d", 8), 0);
    assert_int_equal(inventory_addf(&inv, "t", "bytes", "%llu", 404273352704ULL), 0);
    assert_int_equal(inventory_addf(&inv, "t", "cores", "%.6g", 2.5), 0);
    assert_int_equal(inventory_addf(&inv, "t", "version", "%d.%d", 12, 2), 0);
    assert_int_equal(inventory_addf(&inv, "t", "id", "0x%08X", 0x1234u), 0);
    assert_int_equal(inventory_addf(&inv, "t", "list", "%s", "0-3"), 0);
    assert_int_equal(inventory_addf(&inv, "t", "inf", "%g", INFINITY), 0);
    assert_int_equal(inventory_add(&inv, "t", "family", "6"), 0);
    static const bool number[] = {true, true, true, false, false, false, false, false};
    assert_int_equal(inv.nrows, 8);
    for (size_t i = 0; i < 8; i++) {
        const js_value_t *v = rows_row(&inv, i);
        assert_int_equal(v[INV_NUMBER].present && v[INV_NUMBER].i == 1, number[i]);
    }
    rows_free(&inv);
}

static void test_jsonl_rows(void **state)
{
    (void)state;
    static const char *const cols[] = {"pid", "comm", "cpu", "rss", "say \"x\"\n"};
    js_cell_t rows[] = {
        cell_int(100),
        cell_text("a) b (c"),
        cell_real(0.1),
        cell_int(10000000),
        cell_missing(),
        cell_int(-1),
        cell_text("new\nline\x01\xff"),
        cell_real(1e7),
        cell_missing(),
        cell_text(""),
        cell_int(INT64_MAX),
        cell_text(NULL),
        cell_real(NAN),
        cell_real(-0.0),
        cell_int(0),
        cell_int(INT64_MIN),
        cell_text("\"q\"\\"),
        cell_real(INFINITY),
        cell_real(2.5e-7),
        cell_real(0.0),
    };
    char *text = run_sink(&sink_jsonl, cols, 5, rows, sizeof(rows) / sizeof(rows[0]) / 5);
    assert_string_equal(
        text, "{\"pid\":100,\"comm\":\"a) b (c\",\"cpu\":0.1,\"rss\":10000000,\"say \\\"x\\\"\\n\":null}\n"
              "{\"pid\":-1,\"comm\":\"new\\\\nline\\\\x01\\\\xff\",\"cpu\":10000000,\"rss\":null,\"say "
              "\\\"x\\\"\\n\":\"\"}\n"
              "{\"pid\":9223372036854775807,\"comm\":null,\"cpu\":null,\"rss\":0,\"say \\\"x\\\"\\n\":0}\n"
              "{\"pid\":-9223372036854775808,\"comm\":\"\\\"q\\\"\\\\\\\\\",\"cpu\":null,\"rss\":2.5e-07,"
              "\"say \\\"x\\\"\\n\":0}\n");
    free(text);
}

static char *escaped(const char *s, size_t len)
{
    js_buf_t b = {0};
    assert_int_equal(buf_append(&b, "", 0), 0);
    assert_int_equal(text_escape(&b, s, len), 0);
    return b.p;
}

/* Text from the job reaches files and terminals escaped: no control byte, valid UTF-8, reversible. */
static void test_text_escape(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        const char *want;
    } cases[] = {
        {"plain", 5, "plain"},
        {"a\\b", 3, "a\\\\b"},
        {"new\nline\ttab\rcr", 15, "new\\nline\\ttab\\rcr"},
        {"\x1b[31mred", 8, "\\x1b[31mred"}, /* an escape sequence is neutralised */
        {"\x7f", 1, "\\x7f"},
        {"caf\xc3\xa9", 5, "caf\xc3\xa9"},
        {"bad\xff", 4, "bad\\xff"},
        {"\xc2\x9b", 2, "\\u009b"}, /* C1 control (CSI) */
        {"nul\0in", 6, "nul\\x00in"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = escaped(cases[i].in, cases[i].len);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("text_escape case %zu: got \"%s\", want \"%s\"", i, got, cases[i].want);
        free(got);
    }
}

static void test_shell_quote(void **state)
{
    (void)state;
    char *argv[] = {"python3", "-c", "print('hi')", "a b", "", "x\ny", "ok/./path=1"};
    js_buf_t b = {0};
    assert_int_equal(shell_quote(&b, argv, 7), 0);
    assert_string_equal(b.p, "python3 -c 'print('\\''hi'\\'')' 'a b' '' $'x\\ny' ok/./path=1");
    buf_free(&b);
}

static void test_json_writer(void **state)
{
    (void)state;
    js_buf_t b = {0};
    jw_t w;
    jw_init(&w, &b);
    jw_open(&w, NULL);
    jw_int(&w, "a", 1);
    jw_array(&w, "list");
    jw_open(&w, NULL);
    jw_str(&w, "k", "v\"");
    jw_close(&w);
    jw_num(&w, NULL, NAN);
    jw_array_close(&w);
    jw_open(&w, "empty");
    jw_close(&w);
    jw_raw(&w, "raw", "[1,2]");
    jw_close(&w);
    assert_int_equal(jw_error(&w), 0);
    assert_string_equal(
        b.p, "{\n  \"a\": 1,\n  \"list\": [\n    {\n      \"k\": \"v\\\"\"\n    },\n    null\n  ],\n"
             "  \"empty\": {},\n  \"raw\": [1,2]\n}");
    buf_free(&b);
}

static void test_jsonl_no_rows(void **state)
{
    (void)state;
    static const char *const cols[] = {"a"};
    char *text = run_sink(&sink_jsonl, cols, 1, NULL, 0);
    assert_string_equal(text, ""); /* JSON Lines has no header */
    free(text);
    assert_int_equal(sink_jsonl.end(NULL), 0);
}

/* A full disk must surface as an error from row() or at the latest from end(), for both sinks. */
static void test_write_error(void **state)
{
    (void)state;
    const js_tab_sink_t *sinks[] = {&sink_csv, &sink_jsonl};
    static const char *const cols[] = {"a", "b"};
    js_cell_t row[2] = {cell_int(1), cell_text("some text that fills the buffer")};
    for (size_t k = 0; k < 2; k++) {
        FILE *f = fopen("/dev/full", "w");
        if (!f)
            skip();
        void *st = NULL;
        int r = sinks[k]->begin(f, cols, 2, &st);
        int worst = r;
        for (int i = 0; i < 1000 && r == 0; i++) {
            r = sinks[k]->row(st, row);
            if (r < 0)
                worst = r;
        }
        int e = sinks[k]->end(st);
        if (e < 0)
            worst = e;
        if (worst >= 0)
            fail_msg("%s: writing to /dev/full reported no error", sinks[k]->name);
        fclose(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fmt_real),         cmocka_unit_test(test_csv_header_quoting),
        cmocka_unit_test(test_csv_values),       cmocka_unit_test(test_csv_no_rows),
        cmocka_unit_test(test_json_str),         cmocka_unit_test(test_json_str_strict_utf8),
        cmocka_unit_test(test_json_num),         cmocka_unit_test(test_jsonl_rows),
        cmocka_unit_test(test_json_number_text), cmocka_unit_test(test_jsonl_no_rows),
        cmocka_unit_test(test_write_error),      cmocka_unit_test(test_text_escape),
        cmocka_unit_test(test_shell_quote),      cmocka_unit_test(test_json_writer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
