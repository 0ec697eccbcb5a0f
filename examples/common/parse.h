/* Number parsing shared by the example programs' command lines. */
#ifndef EXAMPLES_PARSE_H
#define EXAMPLES_PARSE_H

#include <stddef.h>

/* "64M", "1K", "1G", "100" (binary multiples) into bytes, at most 2^40. Returns 0 or -1. */
int parse_bytes(const char *text, size_t *out);
/* A decimal integer in [lo, hi] with nothing after it. Returns 0 or -1. */
int parse_int(const char *text, long lo, long hi, long *out);
/* "1.5 MiB", "64 KiB", "12 B": a short human form of BYTES. Returns BUF. */
char *format_bytes(size_t bytes, char *buf, size_t len);

#endif
