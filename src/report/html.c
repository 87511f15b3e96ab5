/* SPDX-License-Identifier: MIT
 *
 * The report page shell (see html.h): head with inline CSS and a Content-Security-Policy that allows no
 * request, escaping, the header block, sections, tables and advice. The CSS and JavaScript live in
 * src/report/report.css and report.js and reach this file as byte arrays generated at build time
 * (scripts/embed_assets.py -> report_assets.h).
 */
#include "report/html.h"
#include "config.h"
#include "core/json.h"
#include "report/units.h"
#include "report_assets.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int put(js_html_t *h, const char *s, size_t len)
{
    if (!h->err && len)
        h->err = buf_append(h->buf, s, len);
    return h->err;
}

int html_raw(js_html_t *h, const char *markup)
{
    return markup ? put(h, markup, strlen(markup)) : h->err;
}

int html_printf(js_html_t *h, const char *fmt, ...)
{
    if (h->err)
        return h->err;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return h->err = -EINVAL;
    if (buf_reserve(h->buf, h->buf->len + (size_t)n + 1) < 0)
        return h->err = -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(h->buf->p + h->buf->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    h->buf->len += (size_t)n;
    return 0;
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

/* char_len: the length of the character at u (1 for an invalid byte); *ent what to write instead of it (an
 * entity, or U+FFFD for bytes that must not appear in a page), or NULL to copy it. */
static size_t char_len(const unsigned char *u, size_t n, const char **ent)
{
    *ent = NULL;
    switch (u[0]) {
    case '&':
        *ent = "&amp;";
        return 1;
    case '<':
        *ent = "&lt;";
        return 1;
    case '>':
        *ent = "&gt;";
        return 1;
    case '"':
        *ent = "&quot;";
        return 1;
    case '\'':
        *ent = "&#39;";
        return 1;
    case '\t':
    case '\n':
    case '\r':
        return 1;
    default:
        break;
    }
    if (u[0] < 0x80) {
        if (u[0] < 0x20 || u[0] == 0x7f)
            *ent = REPLACEMENT;
        return 1;
    }
    size_t k = utf8_len(u, n);
    if (k == 0 || (k == 2 && u[0] == 0xc2 && u[1] < 0xa0) ||      /* invalid; C1 controls U+0080..U+009F */
        (k == 3 && u[0] == 0xef && u[1] == 0xbf && u[2] >= 0xbe)) /* U+FFFE, U+FFFF */
        *ent = REPLACEMENT;
    return k ? k : 1;
}

/* escape: `len` bytes of s, at most `max_chars` characters, then an ellipsis if any were left out. */
static int escape(js_html_t *h, const char *s, size_t len, size_t max_chars)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t run = 0, i = 0, chars = 0; /* bytes [i - run, i) are copied as they are */
    while (i < len && !h->err) {
        if (chars == max_chars) {
            put(h, s + i - run, run);
            return put(h, "\xe2\x80\xa6", 3); /* … */
        }
        const char *ent;
        size_t k = char_len(u + i, len - i, &ent);
        chars++;
        if (!ent) {
            run += k;
            i += k;
            continue;
        }
        put(h, s + i - run, run);
        put(h, ent, strlen(ent));
        run = 0;
        i += k;
    }
    return put(h, s + i - run, run);
}
int html_textn(js_html_t *h, const char *s, size_t len)
{
    return s ? escape(h, s, len, SIZE_MAX) : h->err;
}

int html_text(js_html_t *h, const char *s)
{
    return s ? escape(h, s, strlen(s), SIZE_MAX) : h->err;
}

int html_text_max(js_html_t *h, const char *s, size_t max_chars)
{
    return s ? escape(h, s, strlen(s), max_chars) : h->err;
}

int html_num(js_html_t *h, double v, int decimals)
{
    char tmp[64];
    units_fixed(tmp, sizeof(tmp), v, decimals);
    if (decimals > 0 && strchr(tmp, '.')) { /* trailing zeros */
        size_t n = strlen(tmp);
        while (tmp[n - 1] == '0')
            tmp[--n] = '\0';
        if (tmp[n - 1] == '.')
            tmp[--n] = '\0';
    }
    return html_raw(h, tmp);
}

int html_value(js_html_t *h, double v, const char *unit)
{
    char tmp[96];
    return html_text(h, units_format(tmp, sizeof(tmp), v, unit));
}

char *html_id(js_html_t *h, const char *id, char *buf, size_t cap)
{
    if (cap == 0)
        return buf;
    if (!id || !*id) {
        snprintf(buf, cap, "c%u", ++h->ids);
        return buf;
    }
    size_t n = 0;
    for (; id[n] && n + 1 < cap; n++) {
        char c = id[n];
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_';
        buf[n] = keep ? c : '_';
    }
    buf[n] = '\0';
    return buf;
}

int html_begin(js_html_t *h, const char *title)
{
    html_raw(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
                "form-action 'none'\">\n"
                "<meta name=\"generator\" content=\"jobscope " JOBSCOPE_VERSION "\">\n"
                "<link rel=\"icon\" href=\"data:,\">\n<title>");
    html_text(h, title);
    html_raw(h, "</title>\n<style>\n");
    html_raw(h, (const char *)report_css);
    return html_raw(h, "</style>\n</head>\n<body>\n<main>\n");
}

void svgdocs_free(js_svgdocs_t *d)
{
    for (size_t i = 0; d && i < d->n; i++)
        buf_free(&d->v[i].svg);
    if (d) {
        free(d->v);
        memset(d, 0, sizeof(*d));
    }
}

/* svg_selector: `sel` (one selector, trimmed) rewritten for a standalone document: "svg.ch text" -> "text",
 * "svg .s" -> ".s"; NULL when it does not start with "svg" or names the document itself. */
static const char *svg_selector(const char *sel, size_t len, size_t *ret_len)
{
    const char *p = sel, *end = sel + len;
    if (len < 3 || strncmp(p, "svg", 3) != 0)
        return NULL;
    p += 3;
    if (end - p >= 3 && !strncmp(p, ".ch", 3))
        p += 3;
    if (p == end || *p != ' ')
        return NULL; /* "svg" or "svg.ch" alone: the document's own layout */
    while (p < end && *p == ' ')
        p++;
    *ret_len = (size_t)(end - p);
    return p;
}

int html_svg_style(js_buf_t *out)
{
    const char *css = (const char *)report_css;
    int r = 0;
    for (const char *p = css; *p && r == 0;) {
        const char *open = strchr(p, '{');
        if (!open)
            break;
        const char *close = strchr(open, '}');
        if (!close)
            break;
        /* selectors of this rule: the text after the last comment or rule end before '{' */
        const char *sel = open;
        while (sel > p && sel[-1] != '}' && sel[-1] != '/' && sel[-1] != '\n')
            sel--;
        bool all = sel < open && *sel != '@', any = false;
        js_buf_t rule = {0};
        for (const char *a = sel; all && a < open;) {
            const char *comma = memchr(a, ',', (size_t)(open - a));
            const char *b = comma ? comma : open;
            size_t n = 0;
            const char *x = svg_selector(a, (size_t)(b - a), &n);
            if (!x) {
                all = false;
                break;
            }
            r |= buf_append(&rule, any ? "," : "", any ? 1 : 0);
            r |= buf_append(&rule, x, n);
            any = true;
            a = comma ? comma + 1 : open;
        }
        if (all && any && r == 0) {
            r |= buf_append(out, rule.p, rule.len);
            r |= buf_append(out, open, (size_t)(close - open + 1));
            r |= buf_append(out, "\n", 1);
        }
        buf_free(&rule);
        p = close + 1;
        if (*open == '{' && sel < open && *sel == '@') { /* an @-block: skip to its own closing brace */
            const char *q = open + 1;
            int depth = 1;
            for (; *q && depth; q++)
                depth += *q == '{' ? 1 : *q == '}' ? -1 : 0;
            p = q;
        }
    }
    return r;
}

int html_end(js_html_t *h)
{
    html_raw(h, "</main>\n<script>\n");
    html_raw(h, (const char *)report_js);
    return html_raw(h, "</script>\n</body>\n</html>\n");
}

/* cell: a table or fact value: text escaped, numbers in human units of `unit`, or as they are without one. */
static int cell(js_html_t *h, const js_cell_t *c, const char *unit)
{
    char tmp[64];
    switch (c->type) {
    case CELL_TEXT:
        return html_text(h, c->s);
    case CELL_INT:
        if (unit)
            return html_value(h, (double)c->i, unit);
        return html_printf(h, "%lld", (long long)c->i);
    case CELL_REAL:
        if (unit)
            return html_value(h, c->d, unit);
        return html_raw(h, isfinite(c->d) ? units_sig(tmp, sizeof(tmp), c->d, 6) : "\xe2\x80\x94");
    default:
        return html_raw(h, "\xe2\x80\x94"); /* — */
    }
}

int html_header(js_html_t *h, const char *title, const char *subtitle, const js_kv_t *facts, size_t nfacts)
{
    html_raw(h, "<header>\n<h1 title=\""); /* the whole title on hover: the screen shows three lines */
    html_text(h, title);
    html_raw(h, "\">");
    html_text(h, title);
    html_raw(h, "</h1>\n");
    if (subtitle) {
        html_raw(h, "<p class=\"sub\">");
        html_text(h, subtitle);
        html_raw(h, "</p>\n");
    }
    if (nfacts) {
        html_raw(h, "<dl class=\"facts\">\n");
        for (size_t i = 0; i < nfacts; i++) {
            html_raw(h, "<div><dt>");
            html_text(h, facts[i].key);
            html_raw(h, "</dt><dd>");
            cell(h, &facts[i].value, facts[i].unit);
            html_raw(h, "</dd></div>\n");
        }
        html_raw(h, "</dl>\n");
    }
    return html_raw(h, "</header>\n");
}

int html_section_begin(js_html_t *h, const char *id, const char *title)
{
    char idbuf[64];
    html_raw(h, "<section");
    if (id)
        html_printf(h, " id=\"%s\"", html_id(h, id, idbuf, sizeof(idbuf)));
    html_raw(h, ">\n<h2>");
    html_text(h, title);
    return html_raw(h, "</h2>\n");
}

int html_section_end(js_html_t *h)
{
    return html_raw(h, "</section>\n");
}

int html_para(js_html_t *h, const char *text)
{
    html_raw(h, "<p>");
    html_text(h, text);
    return html_raw(h, "</p>\n");
}

int html_kv_table(js_html_t *h, const js_kv_t *kv, size_t n)
{
    html_raw(h, "<table class=\"kv\"><tbody>\n");
    for (size_t i = 0; i < n; i++) {
        html_raw(h, "<tr><th scope=\"row\">");
        html_text(h, kv[i].key);
        html_raw(h, kv[i].value.type == CELL_TEXT ? "</th><td class=\"x\">" : "</th><td>");
        cell(h, &kv[i].value, kv[i].unit);
        html_raw(h, "</td></tr>\n");
    }
    return html_raw(h, "</tbody></table>\n");
}

int html_table(js_html_t *h, const char *caption, const js_col_t *cols, size_t ncols, const js_cell_t *cells,
               size_t nrows)
{
    html_raw(h, "<table class=\"tb\">");
    if (caption) {
        html_raw(h, "<caption>");
        html_text(h, caption);
        html_raw(h, "</caption>");
    }
    html_raw(h, "\n<thead><tr>");
    for (size_t c = 0; c < ncols; c++) {
        html_raw(h, "<th scope=\"col\">");
        html_text(h, cols[c].name);
        html_raw(h, "</th>");
    }
    html_raw(h, "</tr></thead>\n<tbody>\n");
    for (size_t r = 0; r < nrows; r++) {
        html_raw(h, "<tr>");
        for (size_t c = 0; c < ncols; c++) {
            const js_cell_t *v = &cells[r * ncols + c];
            html_raw(h, v->type == CELL_TEXT ? "<td class=\"x\">" : "<td class=\"n\">");
            cell(h, v, cols[c].unit);
            html_raw(h, "</td>");
        }
        html_raw(h, "</tr>\n");
    }
    return html_raw(h, "</tbody></table>\n");
}

int html_advice(js_html_t *h, const js_advice_t *a, size_t n)
{
    static const char *const cls[ADVICE_MAX] = {"info", "warn", "crit"};
    static const char *const word[ADVICE_MAX] = {"note", "warning", "problem"};
    html_raw(h, "<ul class=\"adv\">\n");
    for (size_t i = 0; i < n; i++) {
        js_severity_t s = a[i].severity < ADVICE_MAX ? a[i].severity : ADVICE_INFO;
        html_printf(h, "<li class=\"%s\"", cls[s]);
        if (a[i].rule) {
            html_raw(h, " data-rule=\"");
            html_text(h, a[i].rule);
            html_raw(h, "\"");
        }
        html_printf(h, "><span class=\"sev\">%s</span>", word[s]);
        html_text(h, a[i].sentence);
        if (a[i].evidence || a[i].threshold) {
            html_raw(h, "<div class=\"evd\">");
            html_text(h, a[i].evidence);
            if (a[i].threshold) {
                html_raw(h, a[i].evidence ? " <span class=\"thr\">(rule" : "<span class=\"thr\">(rule");
                if (a[i].rule) {
                    html_raw(h, " <code>");
                    html_text(h, a[i].rule);
                    html_raw(h, "</code>");
                }
                html_raw(h, ": ");
                html_text(h, a[i].threshold);
                html_raw(h, ")</span>");
            }
            html_raw(h, "</div>");
        }
        html_raw(h, "</li>\n");
    }
    return html_raw(h, "</ul>\n");
}
