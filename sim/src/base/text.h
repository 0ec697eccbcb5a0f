/*
 * Text helpers shared by sim/'s sources: one-line error messages, bounded string copies, and
 * the line reader and default name of the two text formats (topology files, model files).
 * Not installed, not part of the API.
 */
#ifndef SIM_TEXT_H
#define SIM_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* Formats a one-line message into ERR when ERR is not NULL and ERRLEN > 0. */
void sim_errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Copies SRC into DST (capacity LEN > 0), truncating, always NUL-terminated. */
void sim_strlcpy(char *dst, const char *src, size_t len);

/* Reads one line of F into BUF (MAX_CHARS characters and a NUL), without its '\n'. Only
 * printable bytes, tabs and carriage returns may appear. Returns 1 for a line, 0 at the end of
 * the file, or -EINVAL (a control byte, a line longer than MAX_CHARS) or -EIO (a read error)
 * with the reason in WHY ("invalid byte 0x01", "line longer than 255 characters"), which the
 * caller prefixes with its file and line. */
int sim_read_line(FILE *f, char *buf, size_t max_chars, char *why, size_t whylen);

/* Opens PATH for reading as a WHAT ("model file", "topology file"): NULL with *RC = -errno
 * and "cannot open WHAT 'PATH': REASON" in ERR when it cannot be opened or is a directory (which
 * opens, and then fails its first read). */
FILE *sim_open_text(const char *path, const char *what, int *rc, char *err, size_t errlen);

/* NAME (LEN > 1 bytes): PATH's base name up to its first '.', truncated to LEN - 1 characters,
 * or FALLBACK when that is empty. */
void sim_base_name(const char *path, const char *fallback, char *name, size_t len);

#endif /* SIM_TEXT_H */
