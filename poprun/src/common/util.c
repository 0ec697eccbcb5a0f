/*
 * Small helpers shared by every part of poprun; see util.h.
 */
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int errf(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int parse_int_range(const char *s, long min, long max, int *out)
{
    if (!s || *s == '\0')
        return -1;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
    }
    errno = 0;
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

static void out_of_memory(void)
{
    fputs("poprun: out of memory\n", stderr);
    exit(1);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        out_of_memory();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory();
    return q;
}

char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        out_of_memory();
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p)
        out_of_memory();
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        out_of_memory();
    char *p = xmalloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void strvec_push_take(struct strvec *sv, char *s)
{
    if (sv->n + 2 > sv->cap) {
        sv->cap = sv->cap ? sv->cap * 2 : 8;
        sv->v = xrealloc(sv->v, (size_t)sv->cap * sizeof(*sv->v));
    }
    sv->v[sv->n++] = s;
    sv->v[sv->n] = NULL;
}

void strvec_push(struct strvec *sv, const char *s)
{
    strvec_push_take(sv, xstrdup(s));
}

void strvec_extend(struct strvec *sv, const struct strvec *other)
{
    for (int i = 0; i < other->n; i++)
        strvec_push(sv, other->v[i]);
}

void strvec_free(struct strvec *sv)
{
    for (int i = 0; i < sv->n; i++)
        free(sv->v[i]);
    free(sv->v);
    sv->v = NULL;
    sv->n = 0;
    sv->cap = 0;
}

char *strvec_join(const struct strvec *sv, const char *sep)
{
    size_t len = 1, seplen = strlen(sep);
    for (int i = 0; i < sv->n; i++)
        len += strlen(sv->v[i]) + (i ? seplen : 0);
    char *out = xmalloc(len), *p = out;
    for (int i = 0; i < sv->n; i++) {
        if (i) {
            memcpy(p, sep, seplen);
            p += seplen;
        }
        size_t l = strlen(sv->v[i]);
        memcpy(p, sv->v[i], l);
        p += l;
    }
    *p = '\0';
    return out;
}

bool scan_num(const char **p, const char *end, int *v)
{
    int digits = 0;
    *v = 0;
    while (*p < end && **p >= '0' && **p <= '9' && digits < 9) {
        *v = *v * 10 + (**p - '0');
        (*p)++;
        digits++;
    }
    return digits > 0 && (*p == end || **p < '0' || **p > '9');
}

bool scan_eat(const char **p, const char *end, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(end - *p) < n || memcmp(*p, word, n) != 0)
        return false;
    *p += n;
    return true;
}
