/* SPDX-License-Identifier: MIT
 *
 * The textfile sink (textfile.h): the monitor's thread renders the text exposition and hands the buffer to a
 * writer thread through a one-slot mailbox (a newer sample replaces one not written yet); the thread writes
 * a new temporary file FILE.tmp.PID.RANDOM and renames it over FILE. The temporary name is fresh for each
 * write and opened with O_CREAT|O_EXCL|O_NOFOLLOW: in a folder others can write in, a file or symbolic link
 * made there in advance is never written through (the next name is tried), and never stops the sink.
 */
#include "sinks/textfile.h"

#include "core/json.h"
#include "sys/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TEXTFILE_TMP_TRIES 16 /* fresh names tried before a write fails */

struct js_textfile {
    char *path, *tmp; /* tmp: the temporary file of the write in progress ("" between writes) */
    size_t tmp_cap;
    const prom_cfg_t *prom;
    pthread_t thread;
    bool started;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    js_buf_t pending; /* the next content to write (owned by the mailbox) */
    bool have_pending, quit, removed;
    size_t last_len;
    atomic_uint_fast64_t writes, errors;
};

/* open_tmp: a new file FILE.tmp.PID.RANDOM, its name in t->tmp. A name that exists (a file, a symbolic link:
 * anyone's) is never opened: another random name is tried. Returns the descriptor or -errno. */
static int open_tmp(js_textfile_t *t)
{
    for (int i = 0; i < TEXTFILE_TMP_TRIES; i++) {
        uint64_t rnd = 0;
        if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            rnd = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15u + (uint64_t)i;
        }
        snprintf(t->tmp, t->tmp_cap, "%s.tmp.%d.%016llx", t->path, (int)getpid(), (unsigned long long)rnd);
        int fd = sys_openat(AT_FDCWD, t->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST) {
            int e = errno;
            t->tmp[0] = '\0';
            return -e;
        }
    }
    t->tmp[0] = '\0';
    return -EEXIST;
}

/* write_file: a new temporary file, then rename. Returns 0 or -errno (the temporary file is removed). */
static int write_file(js_textfile_t *t, const js_buf_t *b)
{
    int fd = open_tmp(t);
    if (fd < 0)
        return fd;
    size_t off = 0;
    int r = 0;
    while (off < b->len) {
        ssize_t w = sys_write(fd, b->p + off, b->len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            r = w < 0 ? -errno : -EIO;
            break;
        }
        off += (size_t)w;
    }
    if (sys_close(fd) < 0 && r == 0)
        r = -errno;
    if (r == 0 && rename(t->tmp, t->path) < 0)
        r = -errno;
    if (r < 0)
        unlink(t->tmp);
    t->tmp[0] = '\0';
    return r;
}

static void *writer(void *arg)
{
    js_textfile_t *t = arg;
    js_buf_t cur = {0};
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (!t->have_pending && !t->quit)
            pthread_cond_wait(&t->cond, &t->lock);
        if (!t->have_pending)
            break;        /* quit, nothing left to write */
        js_buf_t x = cur; /* swap buffers: the mailbox keeps an allocation to render into */
        cur = t->pending;
        t->pending = x;
        t->have_pending = false;
        pthread_mutex_unlock(&t->lock);
        if (write_file(t, &cur) < 0)
            atomic_fetch_add(&t->errors, 1);
        else
            atomic_fetch_add(&t->writes, 1);
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    buf_free(&cur);
    return NULL;
}

int textfile_open(const char *path, const prom_cfg_t *prom, js_textfile_t **ret, char *err, size_t errlen)
{
    js_textfile_t *t = calloc(1, sizeof(*t));
    size_t n = strlen(path) + 48;
    if (!t || !(t->path = strdup(path)) || !(t->tmp = malloc(n))) {
        snprintf(err, errlen, "out of memory");
        textfile_close(t);
        return -ENOMEM;
    }
    t->tmp_cap = n;
    t->tmp[0] = '\0';
    t->prom = prom;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    /* the folder must take the file now, not at the first sample: a bad path is reported before the run */
    int fd = open_tmp(t);
    struct stat st;
    if (fd < 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
        int e = fd < 0 ? -fd : EISDIR;
        if (fd >= 0) {
            close(fd);
            unlink(t->tmp);
        }
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        t->tmp[0] = '\0';
        t->removed = true;
        textfile_close(t);
        return -e;
    }
    close(fd);
    unlink(t->tmp);
    t->tmp[0] = '\0';
    int r = pthread_create(&t->thread, NULL, writer, t);
    if (r) {
        snprintf(err, errlen, "cannot start the textfile writer: %s", strerror(r));
        t->removed = true;
        textfile_close(t);
        return -r;
    }
    t->started = true;
    *ret = t;
    return 0;
}

/* finish: write what is pending, stop the thread. */
static void finish(js_textfile_t *t)
{
    if (!t->started)
        return;
    pthread_mutex_lock(&t->lock);
    t->quit = true;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    t->started = false;
}

void textfile_close(js_textfile_t *t)
{
    if (!t)
        return;
    finish(t);
    if (!t->removed && t->path) {
        unlink(t->path);
        t->removed = true;
    }
    if (t->tmp && t->tmp[0]) /* a write cut short */
        unlink(t->tmp);
    buf_free(&t->pending);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
    free(t->path);
    free(t->tmp);
    free(t);
}

uint64_t textfile_writes(const js_textfile_t *t)
{
    return atomic_load(&((js_textfile_t *)t)->writes);
}

uint64_t textfile_errors(const js_textfile_t *t)
{
    return atomic_load(&((js_textfile_t *)t)->errors);
}

static int textfile_sample(void *state, const js_sink_sample_t *ev)
{
    js_textfile_t *t = state;
    js_buf_t b = {0};
    int r = buf_reserve(&b, t->last_len + 4096);
    if (r == 0)
        r = prom_render(&b, PROM_TEXT, t->prom, ev->model, ev->sample, ev->seq);
    if (r < 0) {
        buf_free(&b);
        return r;
    }
    t->last_len = b.len;
    pthread_mutex_lock(&t->lock);
    js_buf_t old = t->pending;
    t->pending = b;
    t->have_pending = true;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
    buf_free(&old);
    return 0;
}

static int textfile_stop(void *state)
{
    js_textfile_t *t = state;
    finish(t); /* the last sample reaches the file before it is removed, so a reader never sees a torn one */
    if (!t->removed) {
        unlink(t->path);
        t->removed = true;
    }
    return 0;
}

const js_live_sink_t sink_textfile = {
    .name = "textfile",
    .sample = textfile_sample,
    .stop = textfile_stop,
};
