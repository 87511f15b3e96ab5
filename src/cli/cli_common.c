/* SPDX-License-Identifier: MIT
 *
 * CLI helpers shared by the subcommands (see cli.h).
 */
#include "cli/cli.h"

#include "api/replay.h"

#include "sys/parse.h"
#include "sys/sysio.h"
#include "sys/fsfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void vprint_line(const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fputs("jobscope: ", stderr);
    for (const char *p = msg; *p; p++) {
        if (*p == '\n')
            fputs("\\n", stderr);
        else
            fputc(*p, stderr);
    }
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_line(fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    cli_error("%s (see 'jobscope %s--help')", msg, cmd ? cmd : "");
    return EXIT_USAGE;
}

int cli_file_id(const char *path, js_file_id_t *ret)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return -errno;
    ret->dev = st.st_dev;
    ret->ino = st.st_ino;
    return 0;
}

int cli_output_begin(js_outfile_t *o, const char *path, bool force, bool private_dir,
                     const js_file_id_t *avoid, size_t n)
{
    struct stat st;
    if (lstat(path, &st) == 0)
        for (size_t i = 0; i < n; i++)
            if (avoid[i].dev == st.st_dev && avoid[i].ino == st.st_ino) {
                cli_error("%s: is also an input or another output of this command; choose another file",
                          path);
                outfile_open(o, "", false, false); /* leaves *o closed */
                return -EINVAL;
            }
    int r = outfile_open(o, path, force, private_dir);
    switch (r) {
    case 0:
        return 0;
    case -EEXIST:
        cli_error("%s: already exists (choose another name, or --force to replace it)", path);
        break;
    case -ELOOP:
        cli_error("%s: is a symbolic link; jobscope does not write through links", path);
        break;
    case -EISDIR:
    case -EINVAL:
        cli_error("%s: not a regular file", path);
        break;
    default:
        cli_error("%s: cannot create a file beside it: %s", path, strerror(-r));
    }
    return r;
}

int cli_output_end(js_outfile_t *o, int rc)
{
    if (rc) {
        outfile_abort(o);
        return rc;
    }
    int r = outfile_commit(o);
    if (r < 0) {
        cli_error("cannot write %s: %s", o->path, strerror(-r));
        return EXIT_FAIL;
    }
    return 0;
}

bool cli_output_same(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    const char *ba = sa ? sa + 1 : a, *bb = sb ? sb + 1 : b;
    if (strcmp(ba, bb) != 0)
        return false;
    char da[PATH_MAX], db[PATH_MAX];
    snprintf(da, sizeof(da), "%.*s", sa ? (int)(sa - a) + 1 : 1, sa ? a : ".");
    snprintf(db, sizeof(db), "%.*s", sb ? (int)(sb - b) + 1 : 1, sb ? b : ".");
    struct stat x, y;
    if (stat(da, &x) < 0 || stat(db, &y) < 0)
        return strcmp(da, db) == 0;
    return x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

int cli_write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t n = sys_write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

char **cli_environ_of(const js_fsroot_t *root, pid_t pid, js_buf_t *buf)
{
    char path[32];
    snprintf(path, sizeof(path), "%d/environ", (int)pid);
    if (fs_read(root->proc, path, buf) < 0 || buf->len == 0)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < buf->len; i++)
        n += buf->p[i] == '\0';
    char **env = calloc(n + 2, sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < buf->len && k <= n; i += strlen(buf->p + i) + 1)
        env[k++] = buf->p + i;
    return env;
}

void cli_model_cfg(const js_recording_t *r, js_model_cfg_t *ret)
{
    replay_model_cfg(r, ret);
}

void cli_run_info(const js_recording_t *r, const char *path, js_run_info_t *ret)
{
    replay_run_info(r, path, ret);
}

void cli_summarize(const js_recording_t *r, const char *path, const js_model_t *m, js_run_info_t *info,
                   js_summary_t *su)
{
    replay_summarize(r, path, m, info, su);
}

unsigned cli_replay_flags;

int cli_read_recording(const char *path, unsigned flags, js_recording_t **ret_rec, js_model_t **ret_model,
                       cli_each_fn each, void *arg)
{
    char err[1024] = "";
    int rc = replay_open_ex(path, flags | cli_replay_flags, ret_rec, ret_model, each, arg, err, sizeof(err));
    if (rc < 0 && err[0])
        cli_error("%s", err); /* a callback's failure was reported by the callback */
    return rc < 0 ? EXIT_FAIL : 0;
}

char *cli_summary_text(const char *path)
{
    fflush(stdout);
    int mfd = memfd_create("summary", MFD_CLOEXEC), saved = dup(STDOUT_FILENO);
    if (mfd < 0 || saved < 0 || dup2(mfd, STDOUT_FILENO) < 0) {
        if (mfd >= 0)
            close(mfd);
        if (saved >= 0)
            close(saved);
        return NULL;
    }
    char *argv[] = {"summary", (char *)path, NULL};
    int rc = cmd_summary(2, argv);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    off_t len = lseek(mfd, 0, SEEK_END);
    char *text = rc == 0 && len >= 0 ? calloc(1, (size_t)len + 1) : NULL;
    if (text && pread(mfd, text, (size_t)len, 0) != len) {
        free(text);
        text = NULL;
    }
    close(mfd);
    return text;
}
