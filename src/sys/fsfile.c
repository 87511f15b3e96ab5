/* SPDX-License-Identifier: MIT
 *
 * Files a user names: created outputs and copies (see fsfile.h).
 */
#include "sys/fsfile.h"

#include "sys/fsroot.h"
#include "sys/sysio.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int fs_create(const char *path, int flags, mode_t mode)
{
    int fd = sys_openat(AT_FDCWD, path, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, mode);
    if (fd < 0)
        return errno == ENXIO ? -EINVAL : -errno; /* ENXIO: a FIFO without a reader, a device without one */
    struct stat st;
    int fl;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (fl = fcntl(fd, F_GETFL)) < 0 ||
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        sys_close(fd);
        return -EINVAL;
    }
    return fd;
}

int fs_copy(const char *from, const char *to, mode_t mode, bool sync)
{
    int in = fs_open(AT_FDCWD, from);
    if (in < 0)
        return in;
    int out = fs_create(to, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    if (out < 0) {
        sys_close(in);
        return out;
    }
    char buf[1 << 16];
    int r = 0;
    for (;;) {
        ssize_t n = sys_read(in, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            r = -errno;
            break;
        }
        if (n == 0)
            break;
        for (ssize_t done = 0; done < n && r == 0;) {
            ssize_t w = sys_write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                r = w < 0 ? -errno : -EIO;
            else
                done += w;
        }
        if (r < 0)
            break;
    }
    sys_close(in);
    if (r == 0 && sync && fsync(out) < 0)
        r = -errno;
    if (sys_close(out) < 0 && r == 0)
        r = -errno;
    if (r < 0)
        unlink(to);
    return r;
}
