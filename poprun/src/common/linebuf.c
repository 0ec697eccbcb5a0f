/*
 * Line splitting for pipes; see linebuf.h.
 */
#include "common/linebuf.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

void linebuf_init(struct linebuf *lb, size_t max, linebuf_fn on_line, void *ctx)
{
    memset(lb, 0, sizeof(*lb));
    lb->max = max ? max : 1;
    lb->on_line = on_line;
    lb->ctx = ctx;
}

static void append(struct linebuf *lb, const char *data, size_t n)
{
    if (n == 0)
        return;
    if (lb->len + n > lb->cap) {
        lb->cap = lb->len + n > 2 * lb->cap ? lb->len + n : 2 * lb->cap;
        lb->buf = xrealloc(lb->buf, lb->cap);
    }
    memcpy(lb->buf + lb->len, data, n);
    lb->len += n;
}

void linebuf_feed(struct linebuf *lb, const char *data, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        size_t take = nl ? (size_t)(nl - data) : n;
        /* Never hold more than MAX bytes: pass a long line on in pieces. */
        while (lb->len + take > lb->max) {
            size_t room = lb->max - lb->len;
            append(lb, data, room);
            lb->on_line(lb->ctx, lb->buf, lb->len);
            lb->len = 0;
            data += room;
            n -= room;
            take -= room;
        }
        append(lb, data, take);
        data += take;
        n -= take;
        if (nl) {
            lb->on_line(lb->ctx, lb->buf ? lb->buf : "", lb->len);
            lb->len = 0;
            data++;
            n--;
        }
    }
}

void linebuf_finish(struct linebuf *lb)
{
    if (lb->len > 0) {
        lb->on_line(lb->ctx, lb->buf, lb->len);
        lb->len = 0;
    }
}

void linebuf_free(struct linebuf *lb)
{
    free(lb->buf);
    memset(lb, 0, sizeof(*lb));
}

int write_all(int fd, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int is_pipe(int fd)
{
    struct stat st;

    return fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
}

int write_line_whole(int fd, const void *data, size_t n, size_t chunk)
{
    long ns = 20000;

    for (;;) {
        int pending = 0;
        struct pollfd p = {fd, POLLOUT, 0};

        if (ioctl(fd, FIONREAD, &pending) != 0 || pending <= 0 || (size_t)pending + n <= chunk)
            break;
        if (poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP)))
            break; /* no reader */
        nanosleep(&(struct timespec){0, ns}, NULL);
        ns = ns < 500000 ? 2 * ns : 1000000;
    }
    return write_all(fd, data, n);
}
