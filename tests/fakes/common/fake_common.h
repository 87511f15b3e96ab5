/* SPDX-License-Identifier: MIT
 *
 * What the fake vendor libraries (tests/fakes/nvml, tests/fakes/rocm) share: the scenario line tokenizer,
 * number parsing with binary suffixes, value series over scenario time (held or linearly interpolated, with
 * their exact integral for energy counters), the scenario clock (CLOCK_MONOTONIC since the library's init,
 * times a speed factor, or a manual clock read from a file), PID specifications resolved at call time, and
 * the IFUNC export macro that lets a scenario hide an entry point from dlsym. Everything here has hidden
 * visibility: a fake exports only the vendor's symbols. See tests/fakes/README.md for the scenario format.
 */
#ifndef JOBSCOPE_FAKE_COMMON_H
#define JOBSCOPE_FAKE_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define FK_MAX_TOKENS 64
#define FK_NEVER 1e300 /* a time that never comes */

/* Export `sym` (of function type `fntype`) implemented by `impl`, through a GNU IFUNC whose resolver runs at
 * dlsym/bind time and returns NULL when the scenario says `omit sym`: dlsym then returns NULL, which is what
 * a library lacking the symbol looks like to a caller that checks dlsym's result. */
#define FK_EXPORT(sym, fntype, impl)                                                                         \
    static fntype *fk_resolve_##sym(void)                                                                    \
    {                                                                                                        \
        return fk_omitted(#sym) ? NULL : impl;                                                               \
    }                                                                                                        \
    __attribute__((visibility("default"))) fntype sym __attribute__((ifunc("fk_resolve_" #sym)));

/* Each fake defines this: whether its scenario omits `sym` (read afresh at each call). */
bool fk_omitted(const char *sym);

/* fk_scenario_omits: whether the scenario file named by environment variable `env` has an `omit` line
 * listing `sym`. A missing variable or file omits nothing. */
bool fk_scenario_omits(const char *env, const char *sym);

/* fk_tokenize: split `line` in place at blanks into at most FK_MAX_TOKENS tokens; "double quotes" group
 * blanks (no escapes); '#' outside quotes starts a comment. Returns the number of tokens, -1 on an
 * unterminated quote or too many tokens. */
int fk_tokenize(char *line, char **tok);

/* fk_parse_value: a number (decimal, 0x hex, exponent) with an optional suffix Ki Mi Gi Ti (powers of 1024)
 * or k M G T (powers of 1000), each optionally followed by B. Returns 0 or -1. */
int fk_parse_value(const char *s, double *ret);

/* ---- series ---- */

typedef enum { FK_HOLD, FK_LINEAR } fk_mode_t;

typedef struct {
    double t; /* scenario seconds */
    double v;
} fk_point_t;

typedef struct {
    bool set;
    fk_mode_t mode;
    size_t n;
    fk_point_t *p; /* sorted by t */
} fk_series_t;

/* fk_series_parse: `tok` = [hold|linear] (V | T:V...), points in increasing time. Returns 0 or -1 with a
 * reason in err. Replaces a previous content. */
int fk_series_parse(fk_series_t *s, char **tok, int ntok, char *err, size_t errlen);

/* fk_series_const: make `s` the constant v. */
void fk_series_const(fk_series_t *s, double v);

/* fk_series_at: the value at time t: before the first point the first value, after the last the last one;
 * hold = the latest point at or before t, linear = interpolated. An unset series is 0. */
double fk_series_at(const fk_series_t *s, double t);

/* fk_series_integral: exact integral of fk_series_at over [t0, t1] (value x seconds). */
double fk_series_integral(const fk_series_t *s, double t0, double t1);

void fk_series_free(fk_series_t *s);

/* ---- clock ---- */

typedef struct {
    struct timespec mono0;
    uint64_t real0_us;   /* wall clock at start, us */
    double speed;        /* scenario seconds per real second */
    char time_file[512]; /* manual clock: a file holding the scenario time in seconds, or "" */
} fk_clock_t;

/* fk_clock_start: scenario time 0 is now; `speed_env` names the speed factor variable (default 1) and
 * `time_file_env` the manual clock file variable. */
void fk_clock_start(fk_clock_t *c, const char *speed_env, const char *time_file_env);

/* fk_clock_now: scenario seconds since start (from the time file when one is set and readable). */
double fk_clock_now(const fk_clock_t *c);

/* fk_clock_wall_us: wall-clock microseconds at scenario time t (start + t / speed). */
uint64_t fk_clock_wall_us(const fk_clock_t *c, double t);

/* fk_sleep_ms: sleep that long in real time (a `delay` rule). */
void fk_sleep_ms(double ms);

/* ---- PIDs ---- */

typedef struct {
    long pid;   /* literal, or -1 */
    char *name; /* "$VAR": variable name; "file:PATH": path; NULL for a literal */
    bool is_file;
} fk_pid_t;

/* fk_pid_parse: "1234", "$NAME" (environment variable read at each call) or "file:PATH" (first integer in
 * the file, read at each call). Returns 0 or -1. */
int fk_pid_parse(fk_pid_t *p, const char *tok);

/* fk_pid_resolve: the PID now, or -1 when the variable or file is absent or holds no positive integer. */
long fk_pid_resolve(const fk_pid_t *p);

void fk_pid_free(fk_pid_t *p);

/* ---- small helpers ---- */

/* fk_strlcpy: copy with truncation; returns strlen(src). */
size_t fk_strlcpy(char *dst, const char *src, size_t size);

/* fk_window: parse optional trailing "from T" / "to T" pairs at tok[i...]; advances *i. Returns 0 or -1. */
int fk_window(char **tok, int ntok, int *i, double *from, double *to);

#endif
