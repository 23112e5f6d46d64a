/* Shared by the /proc parsers (see text.h). */
#include "text.h"
#include "profile/hex.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pp__read_proc(const char *path, char **buf, size_t *len)
{
    size_t cap = 0, n = 0;
    int fd, rc = 0;

    *buf = NULL;
    *len = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (;;) {
        ssize_t got;
        if (n + 65536 > cap) {
            char *nb = realloc(*buf, cap = cap * 2 + 65536);
            if (!nb) {
                rc = -ENOMEM;
                break;
            }
            *buf = nb;
        }
        got = read(fd, *buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -errno;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    *len = n;
    return rc;
}

int pp__hex64(const char **p, const char *end, uint64_t *v)
{
    const char *s = *p;
    uint64_t x = 0;
    int n = 0, d;

    for (; s < end && n < 16 && (d = pp__hexval(*s)) >= 0; s++, n++)
        x = x << 4 | (uint64_t)d;
    if (n == 0 || (s < end && pp__hexval(*s) >= 0))
        return -1;
    *p = s;
    *v = x;
    return 0;
}

size_t pp__count_le(const void *base, size_t n, size_t elem, size_t off, uint64_t x)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t v;
        memcpy(&v, (const char *)base + mid * elem + off, sizeof(v));
        if (v <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}
