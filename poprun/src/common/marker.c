/*
 * Status marker lines between instance wrappers and poprun; see marker.h.
 */
#include "common/marker.h"

#include <stdio.h>
#include <string.h>

#include "common/util.h"

size_t marker_format(char *buf, size_t len, const char *token, const struct marker *m)
{
    static const char *const kinds[] = {"exit", "signal", "stop", "stopped"};
    int n = snprintf(buf, len, MARKER_PREFIX "%s %d %s %d\n", token, m->instance, kinds[m->kind],
                     m->value);
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

/* Parses a marker that starts at P (on the prefix). */
static bool parse_at(const char *p, const char *end, const char *token, struct marker *m,
                     const char **stop)
{
    if (!scan_eat(&p, end, MARKER_PREFIX) || !scan_eat(&p, end, token) || !scan_eat(&p, end, " ") ||
        !scan_num(&p, end, &m->instance) || !scan_eat(&p, end, " "))
        return false;
    if (scan_eat(&p, end, "exit "))
        m->kind = MARKER_EXIT;
    else if (scan_eat(&p, end, "signal "))
        m->kind = MARKER_SIGNAL;
    else if (scan_eat(&p, end, "stop "))
        m->kind = MARKER_STOP;
    else if (scan_eat(&p, end, "stopped "))
        m->kind = MARKER_STOPPED;
    else
        return false;
    /* The marker ends its line (the wrapper writes its newline with it). */
    if (!scan_num(&p, end, &m->value) || (p < end && *p != ' ' && *p != '\r'))
        return false;
    *stop = p;
    return true;
}

bool marker_find(const char *line, size_t len, const char *token, struct marker *m, size_t *start,
                 size_t *end)
{
    const char *lend = line + len;
    size_t plen = strlen(MARKER_PREFIX);
    for (const char *p = line; (size_t)(lend - p) >= plen; p++) {
        p = memchr(p, '@', (size_t)(lend - p));
        if (!p)
            return false;
        const char *stop;
        if (parse_at(p, lend, token, m, &stop)) {
            *start = (size_t)(p - line);
            *end = (size_t)(stop - line);
            return true;
        }
    }
    return false;
}

size_t marker_out_prefix(char *buf, size_t len, const char *token)
{
    int n = snprintf(buf, len, MARKER_OUT_PREFIX "%s ", token);
    return n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1;
}

bool marker_out_find(const char *line, size_t len, const char *token, size_t *start, size_t *at)
{
    size_t plen = strlen(MARKER_OUT_PREFIX), tlen = strlen(token);
    const char *lend = line + len;

    /* Anywhere in the line: mpirun's --tag-output or --timestamp-output may stand before it. */
    for (const char *p = line; (size_t)(lend - p) >= plen + tlen + 1; p++) {
        p = memchr(p, '@', (size_t)(lend - p));
        if (!p || (size_t)(lend - p) < plen + tlen + 1)
            return false;
        if (memcmp(p, MARKER_OUT_PREFIX, plen) == 0 && memcmp(p + plen, token, tlen) == 0 &&
            p[plen + tlen] == ' ') {
            *start = (size_t)(p - line);
            *at = *start + plen + tlen + 1;
            return true;
        }
    }
    return false;
}
