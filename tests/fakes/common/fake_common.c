/* SPDX-License-Identifier: MIT
 *
 * Scenario plumbing shared by the fake NVML and ROCm SMI libraries: tokenizer, numbers, series, clock, PIDs.
 * Compiled into each fake with -fvisibility=hidden, so none of these names is exported.
 */
#include "fake_common.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t fk_strlcpy(char *dst, const char *src, size_t size)
{
    size_t len = strlen(src);
    if (size) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}

int fk_tokenize(char *line, char **tok)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p || *p == '#')
            break;
        if (n == FK_MAX_TOKENS)
            return -1;
        if (*p == '"') {
            tok[n++] = ++p;
            char *q = strchr(p, '"');
            if (!q)
                return -1;
            *q = '\0';
            p = q + 1;
        } else {
            tok[n++] = p;
            while (*p && !isspace((unsigned char)*p))
                p++;
            if (*p)
                *p++ = '\0';
        }
    }
    return n;
}

int fk_parse_value(const char *s, double *ret)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v))
        return -1;
    double mult = 1;
    if (end[0] && end[1] == 'i') {
        const char *units = "KMGT";
        const char *u = strchr(units, toupper((unsigned char)end[0]));
        if (!u)
            return -1;
        for (const char *k = units; k <= u; k++)
            mult *= 1024;
        end += 2;
    } else if (*end) {
        const char *units = "kMGT";
        const char *u = strchr(units, end[0] == 'K' ? 'k' : end[0]);
        if (u) {
            for (const char *k = units; k <= u; k++)
                mult *= 1000;
            end++;
        }
    }
    if (*end == 'B')
        end++;
    if (*end)
        return -1;
    *ret = v * mult;
    return 0;
}

/* ---- series ---- */

void fk_series_free(fk_series_t *s)
{
    free(s->p);
    memset(s, 0, sizeof(*s));
}

void fk_series_const(fk_series_t *s, double v)
{
    fk_series_free(s);
    s->p = malloc(sizeof(*s->p));
    if (!s->p)
        return;
    s->p[0] = (fk_point_t){0, v};
    s->n = 1;
    s->set = true;
    s->mode = FK_HOLD;
}

int fk_series_parse(fk_series_t *s, char **tok, int ntok, char *err, size_t errlen)
{
    fk_series_t r = {.set = true, .mode = FK_HOLD};
    int i = 0;
    if (i < ntok && strcmp(tok[i], "hold") == 0) {
        i++;
    } else if (i < ntok && strcmp(tok[i], "linear") == 0) {
        r.mode = FK_LINEAR;
        i++;
    }
    if (i >= ntok) {
        snprintf(err, errlen, "a value or T:V points expected");
        return -1;
    }
    r.p = calloc((size_t)(ntok - i), sizeof(*r.p));
    if (!r.p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (; i < ntok; i++) {
        char *colon = strchr(tok[i], ':');
        fk_point_t pt = {0, 0};
        if (colon) {
            *colon = '\0';
            if (fk_parse_value(tok[i], &pt.t) < 0 || fk_parse_value(colon + 1, &pt.v) < 0) {
                *colon = ':';
                snprintf(err, errlen, "bad point '%s' (T:V expected)", tok[i]);
                free(r.p);
                return -1;
            }
            *colon = ':';
        } else if (r.n > 0 || i + 1 < ntok || fk_parse_value(tok[i], &pt.v) < 0) {
            snprintf(err, errlen, "bad value '%s' (a single V, or T:V points)", tok[i]);
            free(r.p);
            return -1;
        }
        if (r.n > 0 && pt.t <= r.p[r.n - 1].t) {
            snprintf(err, errlen, "point times must increase ('%s')", tok[i]);
            free(r.p);
            return -1;
        }
        r.p[r.n++] = pt;
    }
    fk_series_free(s);
    *s = r;
    return 0;
}

double fk_series_at(const fk_series_t *s, double t)
{
    if (!s->set || s->n == 0)
        return 0;
    if (t <= s->p[0].t)
        return s->p[0].v;
    if (t >= s->p[s->n - 1].t)
        return s->p[s->n - 1].v;
    size_t k = 0;
    while (k + 1 < s->n && s->p[k + 1].t <= t)
        k++;
    if (s->mode == FK_HOLD)
        return s->p[k].v;
    const fk_point_t *a = &s->p[k], *b = &s->p[k + 1];
    return a->v + (b->v - a->v) * (t - a->t) / (b->t - a->t);
}

double fk_series_integral(const fk_series_t *s, double t0, double t1)
{
    if (!s->set || s->n == 0 || t1 <= t0)
        return 0;
    double sum = 0;
    /* segment k spans [p[k-1].t, p[k].t], k = 0 .. n, with open ends outside the points */
    for (size_t k = 0; k <= s->n; k++) {
        double lo = k == 0 ? -INFINITY : s->p[k - 1].t;
        double hi = k == s->n ? INFINITY : s->p[k].t;
        double x = t0 > lo ? t0 : lo, y = t1 < hi ? t1 : hi;
        if (y <= x)
            continue;
        if (k == 0)
            sum += s->p[0].v * (y - x);
        else if (k == s->n)
            sum += s->p[s->n - 1].v * (y - x);
        else if (s->mode == FK_HOLD)
            sum += s->p[k - 1].v * (y - x);
        else
            sum += (fk_series_at(s, x) + fk_series_at(s, y)) / 2 * (y - x);
    }
    return sum;
}

/* ---- clock ---- */

void fk_clock_start(fk_clock_t *c, const char *speed_env, const char *time_file_env)
{
    memset(c, 0, sizeof(*c));
    clock_gettime(CLOCK_MONOTONIC, &c->mono0);
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    c->real0_us = (uint64_t)rt.tv_sec * 1000000u + (uint64_t)rt.tv_nsec / 1000u;
    c->speed = 1;
    const char *sp = speed_env ? getenv(speed_env) : NULL;
    double v;
    if (sp && fk_parse_value(sp, &v) == 0 && v > 0)
        c->speed = v;
    const char *tf = time_file_env ? getenv(time_file_env) : NULL;
    if (tf)
        fk_strlcpy(c->time_file, tf, sizeof(c->time_file));
}

double fk_clock_now(const fk_clock_t *c)
{
    if (c->time_file[0]) {
        FILE *f = fopen(c->time_file, "re");
        if (f) {
            double t;
            int ok = fscanf(f, "%lf", &t) == 1;
            fclose(f);
            if (ok && isfinite(t))
                return t;
        }
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double el = (double)(now.tv_sec - c->mono0.tv_sec) + (double)(now.tv_nsec - c->mono0.tv_nsec) / 1e9;
    return el * c->speed;
}

uint64_t fk_clock_wall_us(const fk_clock_t *c, double t)
{
    return c->real0_us + (uint64_t)llround(t / c->speed * 1e6); /* exact differences between two times */
}

void fk_sleep_ms(double ms)
{
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000) * 1e6)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

/* ---- PIDs ---- */

int fk_pid_parse(fk_pid_t *p, const char *tok)
{
    memset(p, 0, sizeof(*p));
    p->pid = -1;
    if (tok[0] == '$' && tok[1]) {
        p->name = strdup(tok + 1);
    } else if (strncmp(tok, "file:", 5) == 0 && tok[5]) {
        p->name = strdup(tok + 5);
        p->is_file = true;
    } else {
        char *end;
        errno = 0;
        long v = strtol(tok, &end, 10);
        if (end == tok || *end || errno || v <= 0)
            return -1;
        p->pid = v;
        return 0;
    }
    return p->name ? 0 : -1;
}

static long first_int(const char *s)
{
    while (*s && !isdigit((unsigned char)*s))
        s++;
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    return errno || v <= 0 ? -1 : v;
}

long fk_pid_resolve(const fk_pid_t *p)
{
    if (!p->name)
        return p->pid;
    if (!p->is_file) {
        const char *v = getenv(p->name);
        return v ? first_int(v) : -1;
    }
    FILE *f = fopen(p->name, "re");
    if (!f)
        return -1;
    char buf[64];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return first_int(buf);
}

void fk_pid_free(fk_pid_t *p)
{
    free(p->name);
    p->name = NULL;
}

/* ---- misc ---- */

int fk_window(char **tok, int ntok, int *i, double *from, double *to)
{
    while (*i + 1 < ntok && (strcmp(tok[*i], "from") == 0 || strcmp(tok[*i], "to") == 0)) {
        double *dst = tok[*i][0] == 'f' ? from : to;
        if (fk_parse_value(tok[*i + 1], dst) < 0)
            return -1;
        *i += 2;
    }
    return 0;
}

bool fk_scenario_omits(const char *env, const char *sym)
{
    const char *path = getenv(env);
    if (!path || !*path)
        return false;
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof(line), f)) {
        char *tok[FK_MAX_TOKENS];
        int n = fk_tokenize(line, tok);
        if (n < 2 || strcmp(tok[0], "omit") != 0)
            continue;
        for (int i = 1; i < n && !found; i++)
            found = strcmp(tok[i], sym) == 0;
    }
    fclose(f);
    return found;
}
