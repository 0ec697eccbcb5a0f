/*
 * Splitting a byte stream (a pipe) into lines, for tagging instance output and for reading
 * mpirun's stderr.
 */
#ifndef POPRUN_LINEBUF_H
#define POPRUN_LINEBUF_H

#include <stddef.h>

/* Called with each line, without its newline; LEN may be 0. */
typedef void (*linebuf_fn)(void *ctx, const char *line, size_t len);

struct linebuf {
    char *buf;
    size_t len, cap;
    size_t max; /* a line longer than this is passed on in pieces of MAX bytes */
    linebuf_fn on_line;
    void *ctx;
};

void linebuf_init(struct linebuf *lb, size_t max, linebuf_fn on_line, void *ctx);
/* Appends N bytes and passes on every line they complete. */
void linebuf_feed(struct linebuf *lb, const char *data, size_t n);
/* Passes on an unterminated last line, if any (at end of stream). */
void linebuf_finish(struct linebuf *lb);
void linebuf_free(struct linebuf *lb);

/* Writes all N bytes to FD, retrying on EINTR and short writes. Returns 0, or -1 (errno set). */
int write_all(int fd, const void *data, size_t n);

/* Whether FD is a pipe (for write_line_whole). */
int is_pipe(int fd);

/* Waits until the pipe FD holds at most CHUNK - N unread bytes, then writes the N bytes (one
 * line) with write_all. A reader that reads the pipe CHUNK bytes at a time then always reads
 * whole lines. The wait sleeps 20 us, doubling to 1 ms; it ends early when the pipe has no
 * reader any more (the write then fails as write_all's would). */
int write_line_whole(int fd, const void *data, size_t n, size_t chunk);

#endif /* POPRUN_LINEBUF_H */
