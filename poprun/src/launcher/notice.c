/*
 * Reading mpirun's notices; see notice.h.
 */
#include "launcher/notice.h"

#include <string.h>

#include "common/util.h"

/* mpirun frames each notice with a line of dashes (74 of them in OpenMPI 4.1). LINE holds LEN
 * bytes and need not end in a NUL (a line cut at the reader's buffer does not). */
bool notice_is_frame(const char *line, size_t len)
{
    if (len < 20)
        return false;
    for (size_t i = 0; i < len; i++)
        if (line[i] != '-')
            return false;
    return true;
}

/* Skips a word of 1 to MAX bytes up to the next space; the space is not eaten. */
static bool skip_word(const char **p, const char *end, size_t max)
{
    const char *s = *p;
    while (*p < end && **p != ' ' && (size_t)(*p - s) < max)
        (*p)++;
    return *p > s && *p < end && **p == ' ';
}

bool notice_parse_death(const char *line, size_t len, struct notice_death *d)
{
    const char *p = line, *end = line + len;
    int pid;
    if (!skip_word(&p, end, 64) || !scan_eat(&p, end, " noticed that process rank ") ||
        !scan_num(&p, end, &d->rank) || !scan_eat(&p, end, " with PID ") ||
        !scan_num(&p, end, &pid) || !scan_eat(&p, end, " on node "))
        return false;
    const char *node = p;
    if (!skip_word(&p, end, 1024))
        return false;
    size_t nlen = (size_t)(p - node);
    if (nlen >= sizeof(d->node))
        nlen = sizeof(d->node) - 1;
    memcpy(d->node, node, nlen);
    d->node[nlen] = '\0';
    if (!scan_eat(&p, end, " exited on signal ") || !scan_num(&p, end, &d->signo) || d->signo == 0)
        return false;
    return p == end || *p == ' ' || *p == '.' || *p == '\r';
}

bool notice_is_restatement(const char *line, size_t len)
{
    const char *p = line, *end = line + len;
    static const char but[] = " terminated normally, but ";
    if (!skip_word(&p, end, 64) || !scan_eat(&p, end, " job "))
        return false;
    for (; (size_t)(end - p) >= sizeof(but) - 1; p++) {
        if (memcmp(p, but, sizeof(but) - 1) == 0)
            return true;
    }
    return false;
}

bool notice_is_start_failure(const char *line, size_t len)
{
    static const char head[] = "ORTE was unable to reliably start one or more daemons";
    return len >= sizeof(head) - 1 && memcmp(line, head, sizeof(head) - 1) == 0;
}

bool notice_is_lost_daemon(const char *line, size_t len)
{
    static const char head[] = "ORTE has lost communication with a remote daemon";
    return len >= sizeof(head) - 1 && memcmp(line, head, sizeof(head) - 1) == 0;
}

bool notice_parse_lost_node(const char *line, size_t len, char node[NOTICE_NODE_MAX])
{
    const char *p = line, *end = line + len;
    while (p < end && *p == ' ')
        p++;
    if (!scan_eat(&p, end, "Remote daemon: [["))
        return false;
    static const char on[] = "] on node ";
    const char *at = memmem(p, (size_t)(end - p), on, sizeof(on) - 1);
    if (!at)
        return false;
    p = at + sizeof(on) - 1;
    size_t nlen = (size_t)(end - p);
    while (nlen > 0 && (p[nlen - 1] == ' ' || p[nlen - 1] == '\r'))
        nlen--;
    if (nlen == 0 || memchr(p, ' ', nlen))
        return false;
    if (nlen >= NOTICE_NODE_MAX)
        nlen = NOTICE_NODE_MAX - 1;
    memcpy(node, p, nlen);
    node[nlen] = '\0';
    return true;
}
