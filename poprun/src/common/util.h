/*
 * Small helpers shared by every part of poprun: error text, strict integer parsing, growable
 * string vectors and allocation that never returns NULL.
 *
 * Convention: a function that can fail takes (char *err, size_t errlen), returns 0 on success and
 * -1 on failure after writing one line (no "poprun: " prefix, no newline) into ERR. The caller
 * decides how to report it; main prints "poprun: <err>" and exits with status 2.
 */
#ifndef POPRUN_UTIL_H
#define POPRUN_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Exit status for poprun's own usage errors (bad options, impossible plans). */
#define POPRUN_EXIT_USAGE 2

/* Writes a printf-style message into ERR (always NUL-terminated, truncated if needed) and
 * returns -1, so that callers can write `return errf(err, errlen, "...")`. */
int errf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Parses S as a decimal integer in [MIN, MAX]: digits only, no sign, no spaces, no overflow.
 * Returns 0 and stores it in OUT, or -1 when S is anything else. */
int parse_int_range(const char *s, long min, long max, int *out);

/* Scanning a line at *P, bounded by END (not NUL-terminated): each returns whether it matched
 * and advances *P past what it read. scan_num reads a non-negative decimal number of 1 to 9
 * digits (not followed by another digit); scan_eat the exact text WORD. */
bool scan_num(const char **p, const char *end, int *v);
bool scan_eat(const char **p, const char *end, const char *word);

/* Allocation that prints "poprun: out of memory" and exits 1 instead of returning NULL. */
#define POPRUN_NONNULL __attribute__((returns_nonnull, malloc))
void *xmalloc(size_t n) POPRUN_NONNULL;
void *xcalloc(size_t n, size_t size) POPRUN_NONNULL;
void *xrealloc(void *p, size_t n) __attribute__((returns_nonnull));
char *xstrdup(const char *s) POPRUN_NONNULL;
char *xstrndup(const char *s, size_t n) POPRUN_NONNULL;
/* A newly allocated printf-formatted string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2))) POPRUN_NONNULL;

/* A growable, NULL-terminated vector of owned strings (usable as an argv). */
struct strvec {
    char **v; /* v[n] is always NULL once anything was pushed */
    int n;
    int cap;
};

#define STRVEC_INIT                                                                                \
    {                                                                                              \
        NULL, 0, 0                                                                                 \
    }

/* Appends a copy of S. */
void strvec_push(struct strvec *sv, const char *s);
/* Appends S itself; the vector takes ownership. */
void strvec_push_take(struct strvec *sv, char *s);
/* Appends copies of every string of OTHER. */
void strvec_extend(struct strvec *sv, const struct strvec *other);
/* Frees every string and the array; leaves SV empty and reusable. */
void strvec_free(struct strvec *sv);
/* Joins the strings with SEP into a new string ("" when empty). */
char *strvec_join(const struct strvec *sv, const char *sep);

#endif /* POPRUN_UTIL_H */
