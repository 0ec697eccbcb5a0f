/*
 * Host-list expansion; the grammar is in hostlist.h.
 *
 * An item is expanded left to right: the literal text before the first '[' is a prefix, each
 * range of the bracket gives one value, and the rest of the item (which may hold more brackets)
 * is expanded recursively for each value. The expansion is capped at HOSTLIST_MAX names so that
 * "h[0-999999999]" is an error, not an out-of-memory.
 */
#include "plan/hostlist.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
}

struct range {
    long lo, hi;
    int width; /* digits to zero-pad to, 0 for none */
};

/* Parses the digits at *P into V (at most 9 digits, so no overflow); advances *P. */
static int read_number(const char **p, long *v, int *ndigits)
{
    const char *s = *p;
    *v = 0;
    *ndigits = 0;
    while (*s >= '0' && *s <= '9' && *ndigits < 10) {
        *v = *v * 10 + (*s - '0');
        s++;
        (*ndigits)++;
    }
    if (*ndigits == 0 || *ndigits > 9)
        return -1;
    *p = s;
    return 0;
}

/* Parses one "lo" or "lo-hi" at *P, up to ',' or ']'. */
static int read_range(const char **p, struct range *r, const char *spec, char *err, size_t errlen)
{
    int nd_lo, nd_hi;
    bool leading_zero = **p == '0';
    if (read_number(p, &r->lo, &nd_lo) != 0)
        return errf(err, errlen, "malformed host list '%s': expected a number in [...]", spec);
    r->hi = r->lo;
    if (**p == '-') {
        (*p)++;
        if (read_number(p, &r->hi, &nd_hi) != 0)
            return errf(err, errlen, "malformed host list '%s': expected a number after '-'", spec);
    }
    if (r->hi < r->lo)
        return errf(err, errlen, "malformed host list '%s': range %ld-%ld runs backwards", spec,
                    r->lo, r->hi);
    r->width = leading_zero && nd_lo > 1 ? nd_lo : 0;
    return 0;
}

static int push_name(struct strvec *out, char *name, const char *spec, char *err, size_t errlen)
{
    if (out->n >= HOSTLIST_MAX) {
        free(name);
        return errf(err, errlen, "host list '%s' expands to more than %d hosts", spec,
                    HOSTLIST_MAX);
    }
    strvec_push_take(out, name);
    return 0;
}

/* Expands ITEM (no top-level commas) with PREFIX already produced, appending to OUT. */
static int expand_item(const char *prefix, const char *item, struct strvec *out, const char *spec,
                       char *err, size_t errlen)
{
    const char *br = strchr(item, '[');
    if (!br) {
        return push_name(out, xasprintf("%s%s", prefix, item), spec, err, errlen);
    }
    const char *close = strchr(br, ']');
    if (!close)
        return errf(err, errlen, "malformed host list '%s': missing ']'", spec);
    char *lit = xasprintf("%s%.*s", prefix, (int)(br - item), item);
    const char *p = br + 1;
    int rc = 0;
    do {
        struct range r = {0, -1, 0};
        if (read_range(&p, &r, spec, err, errlen) != 0) {
            rc = -1;
            break;
        }
        if (*p != ',' && *p != ']') {
            rc = errf(err, errlen, "malformed host list '%s': unexpected '%c' in [...]", spec, *p);
            break;
        }
        for (long v = r.lo; v <= r.hi && rc == 0; v++) {
            char *next = xasprintf("%s%0*ld", lit, r.width, v);
            rc = expand_item(next, close + 1, out, spec, err, errlen);
            free(next);
        }
    } while (rc == 0 && *p++ == ',');
    free(lit);
    return rc;
}

/* Checks the characters of one item: names, and brackets that hold digits, '-' and ','. */
static int check_item(const char *item, size_t len, const char *spec, char *err, size_t errlen)
{
    if (len == 0)
        return errf(err, errlen, "malformed host list '%s': empty host name", spec);
    bool in_br = false;
    for (size_t i = 0; i < len; i++) {
        char c = item[i];
        if (c == '[' && !in_br)
            in_br = true;
        else if (c == ']' && in_br)
            in_br = false;
        else if (in_br ? !((c >= '0' && c <= '9') || c == '-' || c == ',') : !is_name_char(c))
            return errf(err, errlen, "malformed host list '%s': unexpected '%c'", spec, c);
    }
    if (in_br)
        return errf(err, errlen, "malformed host list '%s': missing ']'", spec);
    return 0;
}

/* Returns the first host of OUT (from index FROM on) that appeared before, or NULL. */
static const char *find_duplicate(const struct strvec *out, int from)
{
    for (int i = from; i < out->n; i++) {
        for (int j = from; j < i; j++) {
            if (strcmp(out->v[i], out->v[j]) == 0)
                return out->v[i];
        }
    }
    return NULL;
}

int hostlist_expand(const char *spec, struct strvec *out, char *err, size_t errlen)
{
    int first = out->n;
    const char *p = spec;
    for (;;) {
        /* An item ends at the first comma outside brackets. */
        size_t len = 0;
        int depth = 0;
        while (p[len] && (p[len] != ',' || depth > 0)) {
            depth += p[len] == '[' ? 1 : p[len] == ']' ? -1 : 0;
            len++;
        }
        if (check_item(p, len, spec, err, errlen) != 0)
            return -1;
        char *item = xstrndup(p, len);
        int rc = expand_item("", item, out, spec, err, errlen);
        free(item);
        if (rc != 0)
            return -1;
        if (p[len] == '\0')
            break;
        p += len + 1;
    }
    const char *dup = find_duplicate(out, first);
    if (dup)
        return errf(err, errlen, "host list '%s' names host %s twice", spec, dup);
    return 0;
}

int hostlist_read_file(const char *path, struct strvec *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return errf(err, errlen, "cannot read hostfile %s: %s", path, strerror(errno));
    char line[4096], e[512];
    int lineno = 0, rc = 0, first = out->n;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        lineno++;
        line[strcspn(line, "#\r\n")] = '\0';
        char *word = line + strspn(line, " \t");
        word[strcspn(word, " \t")] = '\0';
        if (*word == '\0')
            continue;
        if (hostlist_expand(word, out, e, sizeof(e)) != 0)
            rc = errf(err, errlen, "%s:%d: %s", path, lineno, e);
    }
    fclose(f);
    if (rc == 0 && out->n == first)
        rc = errf(err, errlen, "hostfile %s names no host", path);
    const char *dup = rc == 0 ? find_duplicate(out, first) : NULL;
    if (dup)
        rc = errf(err, errlen, "hostfile %s names host %s twice", path, dup);
    return rc;
}
