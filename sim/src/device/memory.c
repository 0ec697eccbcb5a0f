/*
 * Simulated SRAM accounting: a table of live allocations with their sizes and labels.
 *
 * The table is an unordered array with swap-remove, so alloc is amortised O(1) and free is a
 * linear search. Programs hold tens to a few thousand tensors per IPU, for which a scan is
 * cheaper than maintaining a hash; the report sorts a copy of the pointers only when asked.
 */
#include "sim/device/memory.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/text.h"

struct alloc {
    uint64_t id;
    uint64_t bytes;
    char label[SIM_MEM_LABEL_MAX];
};

struct sim_mem {
    uint64_t capacity, used, peak;
    uint64_t next_id;
    struct alloc *v;
    size_t n, cap;
};

int sim_mem_create(uint64_t capacity, sim_mem_t **out)
{
    sim_mem_t *m;

    if (out == NULL)
        return -EINVAL;
    m = calloc(1, sizeof(*m));
    *out = m;
    if (m == NULL)
        return -ENOMEM;
    m->capacity = capacity;
    m->next_id = 1;
    return 0;
}

void sim_mem_destroy(sim_mem_t *m)
{
    if (m == NULL)
        return;
    free(m->v);
    free(m);
}

int sim_mem_alloc(sim_mem_t *m, uint64_t bytes, const char *label, uint64_t *id)
{
    struct alloc *a;

    if (m == NULL || id == NULL)
        return -EINVAL;
    /* Written as a subtraction so that no sum can wrap. */
    if (bytes > m->capacity - m->used)
        return -ENOSPC;
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 32;
        struct alloc *v = realloc(m->v, cap * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        m->v = v;
        m->cap = cap;
    }
    a = &m->v[m->n++];
    a->id = m->next_id++;
    a->bytes = bytes;
    sim_strlcpy(a->label, label ? label : "(unnamed)", sizeof(a->label));
    m->used += bytes;
    if (m->used > m->peak)
        m->peak = m->used;
    *id = a->id;
    return 0;
}

int sim_mem_free(sim_mem_t *m, uint64_t id)
{
    if (m == NULL)
        return -EINVAL;
    for (size_t i = 0; i < m->n; i++) {
        if (m->v[i].id != id)
            continue;
        m->used -= m->v[i].bytes;
        m->v[i] = m->v[--m->n];
        return 0;
    }
    return -ENOENT;
}

uint64_t sim_mem_capacity(const sim_mem_t *m)
{
    return m->capacity;
}

uint64_t sim_mem_used(const sim_mem_t *m)
{
    return m->used;
}

uint64_t sim_mem_peak(const sim_mem_t *m)
{
    return m->peak;
}

size_t sim_mem_count(const sim_mem_t *m)
{
    return m->n;
}

/* Largest first; among equals, the older (smaller id) first: a total order. */
static int by_size_desc(const void *x, const void *y)
{
    const struct alloc *p = *(const struct alloc *const *)x;
    const struct alloc *q = *(const struct alloc *const *)y;

    if (p->bytes != q->bytes)
        return p->bytes < q->bytes ? 1 : -1;
    return (p->id > q->id) - (p->id < q->id);
}

/* snprintf at BUF + *POS that keeps counting past the end of BUF, like snprintf itself. */
static void appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(*pos < len ? buf + *pos : NULL, *pos < len ? len - *pos : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *pos += (size_t)n;
}

size_t sim_mem_report(const sim_mem_t *m, char *buf, size_t len, size_t max_lines)
{
    const struct alloc **order;
    size_t pos = 0, shown;
    uint64_t rest = 0;

    if (buf != NULL && len > 0)
        buf[0] = '\0';
    if (m->n == 0)
        return 0;
    order = malloc(m->n * sizeof(*order));
    if (order == NULL) {
        appendf(buf, len, &pos, "  (no memory to list %zu allocations)\n", m->n);
        return pos;
    }
    for (size_t i = 0; i < m->n; i++)
        order[i] = &m->v[i];
    qsort(order, m->n, sizeof(*order), by_size_desc);
    shown = (max_lines == 0 || max_lines > m->n) ? m->n : max_lines;
    for (size_t i = 0; i < shown; i++)
        appendf(buf, len, &pos, "  %" PRIu64 " bytes  %s\n", order[i]->bytes, order[i]->label);
    for (size_t i = shown; i < m->n; i++)
        rest += order[i]->bytes;
    if (shown < m->n)
        appendf(buf, len, &pos, "  ... and %zu more allocations (%" PRIu64 " bytes)\n",
                m->n - shown, rest);
    free(order);
    return pos;
}
