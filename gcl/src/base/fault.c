/* Fault injection for tests (GCL_FAULT_INJECT); see fault.h. */
#include "base/fault.h"

#include <execinfo.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"

enum { INSTANCE_MAX = 1 << 20 };

static const char *const kind_name[GCL_FAULT_KINDS] = {"alloc", "map", "post", "resize"};
static const char *const event_name[GCL_FAULT_KINDS] = {"allocation", "mapping", "post",
                                                        "resize"};

/* The armed state. Written by gcl_fault_arm (gcl_init, before any IPU thread of the instance
 * exists), read by every event. */
static atomic_int armed;
static atomic_llong counts[GCL_FAULT_KINDS];
static atomic_llong target[GCL_FAULT_KINDS]; /* the event that fails here, 0: none */
static atomic_int fired[GCL_FAULT_KINDS];
static gcl_fault_spec_t spec_armed;

/* Reads the decimal integer at *P (digits only) into *OUT, from LO to HI; advances *P. */
static int read_int(const char **p, long long lo, long long hi, long long *out)
{
    const char *s = *p;
    long long v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (hi - (*s - '0')) / 10)
            return -1;
        v = v * 10 + (*s - '0');
    }
    if (v < lo)
        return -1;
    *p = s;
    *out = v;
    return 0;
}

static int find_kind(const char *s, size_t n)
{
    for (int k = 0; k < GCL_FAULT_KINDS; k++)
        if (strlen(kind_name[k]) == n && strncmp(kind_name[k], s, n) == 0)
            return k;
    return -1;
}

/* One KIND:N[@I] at *P into S; advances *P past it. */
static int parse_entry(const char **p, gcl_fault_spec_t *s, char *why, size_t len)
{
    const char *e = *p;
    size_t n = strcspn(e, ":,");
    int k = find_kind(e, n);
    if (k < 0) {
        snprintf(why, len,
                 "'%.*s' is not a kind: expected alloc, map, post or resize, as in alloc:37",
                 (int)(n > 32 ? 32 : n), e);
        return -1;
    }
    if (e[n] != ':') {
        snprintf(why, len, "%s needs :N, the event that fails (as in %s:37)", kind_name[k],
                 kind_name[k]);
        return -1;
    }
    if (s->nth[k]) {
        snprintf(why, len, "%s is given twice", kind_name[k]);
        return -1;
    }
    e += n + 1;
    long long nth, inst = -1;
    if (read_int(&e, 1, 1000000000000000LL, &nth) != 0) {
        snprintf(why, len, "%s: N must be an integer from 1 (the Nth event fails)", kind_name[k]);
        return -1;
    }
    if (*e == '@' && (e++, read_int(&e, 0, INSTANCE_MAX - 1, &inst) != 0)) {
        snprintf(why, len, "%s:%lld@: expected an instance index from 0 to %d", kind_name[k], nth,
                 INSTANCE_MAX - 1);
        return -1;
    }
    if (*e != ',' && *e != '\0') {
        snprintf(why, len,
                 "unexpected '%.16s' after %.*s (entries are KIND:N[@I], separated by "
                 "commas)",
                 e, (int)(e - *p > 48 ? 48 : e - *p), *p);
        return -1;
    }
    s->nth[k] = nth;
    s->instance[k] = (int)inst;
    *p = e;
    return 0;
}

int gcl_fault_parse(const char *text, gcl_fault_spec_t *out, char *why, size_t len)
{
    gcl_fault_spec_t s;
    for (int k = 0; k < GCL_FAULT_KINDS; k++) {
        s.nth[k] = 0;
        s.instance[k] = -1;
    }
    for (const char *p = text; *p;) {
        if (parse_entry(&p, &s, why, len) != 0)
            return -1;
        if (*p == ',' && !*++p) {
            snprintf(why, len, "a comma ends the list: expected another KIND:N after it");
            return -1;
        }
    }
    if (out)
        *out = s;
    return 0;
}

void gcl_fault_arm_spec(const gcl_fault_spec_t *spec, int instance)
{
    atomic_store(&armed, 0);
    for (int k = 0; k < GCL_FAULT_KINDS; k++) {
        int here = spec && spec->nth[k] && (spec->instance[k] < 0 || spec->instance[k] == instance);
        atomic_store(&counts[k], 0);
        atomic_store(&fired[k], 0);
        atomic_store(&target[k], here ? spec->nth[k] : 0);
    }
    if (!spec)
        return;
    spec_armed = *spec;
    atomic_store_explicit(&armed, 1, memory_order_release);
}

void gcl_fault_arm(int instance)
{
    const char *v = getenv("GCL_FAULT_INJECT");
    gcl_fault_spec_t s;
    char why[160];
    if (!v || !v[0] || gcl_fault_parse(v, &s, why, sizeof why) != 0) {
        gcl_fault_arm_spec(NULL, 0);
        return;
    }
    gcl_fault_arm_spec(&s, instance);
}

int gcl_fault_pending(gcl_fault_kind_t kind)
{
    return atomic_load_explicit(&armed, memory_order_acquire) &&
           atomic_load_explicit(&target[kind], memory_order_relaxed) != 0 &&
           !atomic_load_explicit(&fired[kind], memory_order_relaxed);
}

int gcl_fault_hit(gcl_fault_kind_t kind)
{
    if (!atomic_load_explicit(&armed, memory_order_acquire))
        return 0;
    long long n = atomic_fetch_add_explicit(&counts[kind], 1, memory_order_relaxed) + 1;
    if (n != atomic_load_explicit(&target[kind], memory_order_relaxed))
        return 0;
    atomic_store(&fired[kind], 1);
    GCL_WARN(GCL_SUB_INIT, "GCL_FAULT_INJECT: %s #%lld of this process fails on purpose",
             event_name[kind], n);
    if (gcl_log_level >= GCL_LOG_DEBUG) { /* where, for whoever reads a failure's path back */
        void *frames[32];
        backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
    }
    return 1;
}

int gcl_fault_post(char *err, size_t len, const char *name, int send, int peer)
{
    if (!gcl_fault_hit(GCL_FAULT_POST))
        return 0;
    snprintf(err, len, "%s: posting a %s with instance %d failed: injected (GCL_FAULT_INJECT)",
             name, send ? "send" : "receive", peer);
    return 1;
}

long long gcl_fault_count(gcl_fault_kind_t kind)
{
    return atomic_load(&counts[kind]);
}

void gcl_fault_report(void)
{
    if (!atomic_load(&armed))
        return;
    char what[192] = "", text[192] = "";
    for (int k = 0; k < GCL_FAULT_KINDS; k++) {
        long long t = atomic_load(&target[k]);
        size_t used = strlen(what), tu = strlen(text);
        if (spec_armed.nth[k])
            snprintf(text + tu, sizeof text - tu, "%s%s:%lld", tu ? "," : "", kind_name[k],
                     spec_armed.nth[k]);
        if (spec_armed.nth[k] && spec_armed.instance[k] >= 0)
            snprintf(text + strlen(text), sizeof text - strlen(text), "@%d",
                     spec_armed.instance[k]);
        if (t)
            snprintf(what + used, sizeof what - used, "%s%s:%lld %s", used ? ", " : "",
                     kind_name[k], t, atomic_load(&fired[k]) ? "failed" : "not reached");
    }
    if (!what[0]) /* restricted to other instances */
        return;
    GCL_WARN(GCL_SUB_INIT,
             "GCL_FAULT_INJECT=%s: %lld allocations, %lld mappings, %lld posts since gcl_init; %s",
             text, gcl_fault_count(GCL_FAULT_ALLOC), gcl_fault_count(GCL_FAULT_MAP),
             gcl_fault_count(GCL_FAULT_POST), what);
}
