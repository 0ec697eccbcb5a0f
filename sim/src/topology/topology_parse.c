/*
 * The topology file parser (format in sim/topology/topology.h and sim/README.md).
 *
 * The parser is written to be fuzzed: it reads byte by byte into a fixed buffer, rejects
 * over-long lines, control bytes and absurd counts before allocating anything for them, parses
 * numbers by hand with explicit bounds (no strtol overflow or locale surprises), and stops at the
 * first bad line with one message "FILE:LINE: reason". Semantic checks that need the whole file
 * (divisibility, links inside one ILD, connectivity) happen in the builder, which names the line
 * of a bad "link" too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology_parse.h"

#include "sim/device/params.h"
#include "base/text.h"
#include "topology/topology_build.h"
#include "topology/topology_spec.h"

#define MAX_LINE_CHARS 255
#define MAX_LINES      100000
#define MAX_LINK_LINES 65536
#define MAX_TOKENS     5

enum key {
    K_NAME,
    K_IPUS,
    K_ILD_SIZE,
    K_WIRING,
    K_LINK,
    K_IPUS_PER_GATEWAY,
    K_GWLINKS_PER_GATEWAY,
    K_IPULINK_BW,
    K_IPULINK_LAT,
    K_GWLINK_BW,
    K_GWLINK_LAT,
    K_SYNC_LAT,
    K_GW_SYNC_LAT,
    K_IPU,
    NUM_KEYS
};

static const struct key_def {
    const char *name;
    int min_values, max_values;
} key_defs[NUM_KEYS] = {
    [K_NAME] = {"name", 1, 1},
    [K_IPUS] = {"ipus", 1, 1},
    [K_ILD_SIZE] = {"ild_size", 1, 1},
    [K_WIRING] = {"wiring", 1, 1},
    [K_LINK] = {"link", 2, 3},
    [K_IPUS_PER_GATEWAY] = {"ipus_per_gateway", 1, 1},
    [K_GWLINKS_PER_GATEWAY] = {"gwlinks_per_gateway", 1, 1},
    [K_IPULINK_BW] = {"ipulink_bandwidth_gbs", 1, 1},
    [K_IPULINK_LAT] = {"ipulink_latency_ns", 1, 1},
    [K_GWLINK_BW] = {"gwlink_bandwidth_gbs", 1, 1},
    [K_GWLINK_LAT] = {"gwlink_latency_ns", 1, 1},
    [K_SYNC_LAT] = {"sync_latency_ns", 1, 1},
    [K_GW_SYNC_LAT] = {"gw_sync_latency_ns", 1, 1},
    [K_IPU] = {"ipu", 1, 1},
};

#define MAX_COST_KEYS 64

struct parser {
    const char *path;
    int line;
    int seen[NUM_KEYS];           /* line of the first occurrence, 0 if none */
    int seen_cost[MAX_COST_KEYS]; /* the same for the cost model's keys (sim/device/params.h) */
    int override;                 /* 1: "BASE,KEY=VALUE": replacing a value is allowed */
    struct sim_topo_spec spec;
    struct sim_topo_link_spec *links;
    size_t num_links, cap_links;
    char *err;
    size_t errlen;
};

#define PERR(p, ...)                                                                               \
    do {                                                                                           \
        char msg_[192];                                                                            \
        snprintf(msg_, sizeof(msg_), __VA_ARGS__);                                                 \
        sim_errf((p)->err, (p)->errlen, "%s:%d: %s", (p)->path, (p)->line, msg_);                  \
    } while (0)

/* A whole number of at most 10 digits, no sign, in [min, max]. */
static int parse_int(struct parser *p, const char *key, const char *s, long min, long max, int *out)
{
    long v = 0;
    size_t n = strlen(s);

    if (n == 0 || n > 10 || strspn(s, "0123456789") != n) {
        PERR(p, "%s: '%s' is not a whole number", key, s);
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (s[i] - '0');
    if (v < min || v > max) {
        PERR(p, "%s must be %ld..%ld (got %s)", key, min, max, s);
        return -EINVAL;
    }
    *out = (int)v;
    return 0;
}

/* A decimal with at most 12 integer and 3 fractional digits, returned in thousandths, within
 * [min_milli, max_milli]. Exact: "12.5" is 12500. */
static int parse_milli(struct parser *p, const char *key, const char *s, uint64_t min_milli,
                       uint64_t max_milli, uint64_t *out)
{
    size_t ip = strspn(s, "0123456789");
    const char *frac = s + ip;
    size_t fp = 0;
    uint64_t v = 0;

    if (*frac == '.')
        fp = strspn(frac + 1, "0123456789");
    if (ip == 0 || ip > 12 || (*frac == '.' && (fp == 0 || fp > 3)) ||
        frac[*frac == '.' ? fp + 1 : 0] != '\0') {
        PERR(p, "%s: '%s' is not a number with at most 3 decimals", key, s);
        return -EINVAL;
    }
    for (size_t i = 0; i < ip; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    for (size_t i = 0; i < 3; i++)
        v = v * 10 + (i < fp ? (uint64_t)(frac[1 + i] - '0') : 0);
    if (v < min_milli || v > max_milli) {
        PERR(p, "%s is out of range (got %s)", key, s);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

static int parse_bandwidth(struct parser *p, const char *key, const char *s, uint64_t *out)
{
    uint64_t milli;
    /* 0.001 .. 1,000,000 GB/s; thousandths of GB/s are 10^6 bytes/s. */
    int rc = parse_milli(p, key, s, 1, 1000000000ULL, &milli);

    if (rc == 0)
        *out = milli * 1000000ULL;
    return rc;
}

static int parse_latency(struct parser *p, const char *key, const char *s, sim_time_t *out)
{
    /* 0 .. 10^9 ns; thousandths of a nanosecond are picoseconds. */
    return parse_milli(p, key, s, 0, 1000000000000ULL, out);
}

static int parse_name(struct parser *p, const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n >= SIM_TOPO_NAME_MAX ||
        strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != n) {
        PERR(p, "name must be 1..%d characters of A-Z a-z 0-9 _ . - (got '%s')",
             SIM_TOPO_NAME_MAX - 1, s);
        return -EINVAL;
    }
    sim_strlcpy(p->spec.name, s, sizeof(p->spec.name));
    return 0;
}

static int parse_link(struct parser *p, char **v, int nv)
{
    struct sim_topo_link_spec l = {.count = 1, .line = p->line};
    int rc;

    if (p->num_links == MAX_LINK_LINES) {
        PERR(p, "too many link lines (at most %d)", MAX_LINK_LINES);
        return -EINVAL;
    }
    rc = parse_int(p, "link", v[0], 0, SIM_TOPOLOGY_MAX_IPUS - 1, &l.a);
    if (rc == 0)
        rc = parse_int(p, "link", v[1], 0, SIM_TOPOLOGY_MAX_IPUS - 1, &l.b);
    if (rc == 0 && nv == 3)
        rc = parse_int(p, "link count", v[2], 1, SIM_TOPO_MAX_COUNT, &l.count);
    if (rc != 0)
        return rc;
    if (p->num_links == p->cap_links) {
        size_t cap = p->cap_links ? p->cap_links * 2 : 64;
        struct sim_topo_link_spec *n = realloc(p->links, cap * sizeof(*n));

        if (n == NULL) {
            PERR(p, "out of memory");
            return -ENOMEM;
        }
        p->links = n;
        p->cap_links = cap;
    }
    p->links[p->num_links++] = l;
    return 0;
}

static int apply_key(struct parser *p, enum key k, char **v, int nv)
{
    struct sim_topo_spec *s = &p->spec;
    const char *name = key_defs[k].name;

    switch (k) {
    case K_NAME:
        return parse_name(p, v[0]);
    case K_IPUS:
        return parse_int(p, name, v[0], 1, SIM_TOPOLOGY_MAX_IPUS, &s->num_ipus);
    case K_ILD_SIZE:
        return parse_int(p, name, v[0], 1, SIM_TOPOLOGY_MAX_IPUS, &s->ild_size);
    case K_WIRING:
        if (sim_wiring_parse(v[0], &s->wiring) == 0)
            return 0;
        PERR(p, "wiring must be ladder, ring, full or none (got '%s')", v[0]);
        return -EINVAL;
    case K_LINK:
        return parse_link(p, v, nv);
    case K_IPUS_PER_GATEWAY:
        return parse_int(p, name, v[0], 1, 64, &s->ipus_per_gateway);
    case K_GWLINKS_PER_GATEWAY:
        return parse_int(p, name, v[0], 1, SIM_TOPO_MAX_COUNT, &s->gwlinks_per_gateway);
    case K_IPULINK_BW:
        return parse_bandwidth(p, name, v[0], &s->ipulink_bandwidth);
    case K_GWLINK_BW:
        return parse_bandwidth(p, name, v[0], &s->gwlink_bandwidth);
    case K_IPULINK_LAT:
        return parse_latency(p, name, v[0], &s->ipulink_latency);
    case K_GWLINK_LAT:
        return parse_latency(p, name, v[0], &s->gwlink_latency);
    case K_SYNC_LAT:
        return parse_latency(p, name, v[0], &s->sync_latency);
    case K_GW_SYNC_LAT:
        return parse_latency(p, name, v[0], &s->gw_sync_latency);
    case K_IPU:
        if (sim_device_preset(v[0]) != NULL) {
            s->cost.ipu = sim_device_preset(v[0]) == sim_device_bow();
            return 0;
        }
        PERR(p, "ipu must be gc200 or bow (got '%.40s')", v[0]);
        return -EINVAL;
    case NUM_KEYS:
        break;
    }
    return -EINVAL;
}

/* Splits LINE (comments already cut) into at most MAX_TOKENS tokens, in place. */
static int tokenize(char *line, char **tok)
{
    int n = 0;

    for (char *s = line;;) {
        s += strspn(s, " \t\r");
        if (*s == '\0')
            return n;
        if (n == MAX_TOKENS)
            return MAX_TOKENS + 1;
        tok[n++] = s;
        s += strcspn(s, " \t\r");
        if (*s != '\0')
            *s++ = '\0';
    }
}

/* A cost-model key (sim/device/params.h): one decimal value with at most 3 fractional digits. */
static int parse_cost_key(struct parser *p, char **tok, int n)
{
    const sim_param_info_t *info = sim_param_find(tok[0]);
    size_t idx = 0;
    uint64_t milli;
    int rc;

    if (info == NULL || info->topology) {
        PERR(p, "unknown key '%.40s'", tok[0]);
        return -EINVAL;
    }
    while (sim_param_get(idx) != info)
        idx++;
    if (n != 2) {
        PERR(p, "%s takes 1 value (got %d)", info->key, n - 1);
        return -EINVAL;
    }
    if (idx < MAX_COST_KEYS && p->seen_cost[idx] != 0 && !p->override) {
        PERR(p, "%s is set twice (first on line %d)", info->key, p->seen_cost[idx]);
        return -EINVAL;
    }
    if (idx < MAX_COST_KEYS)
        p->seen_cost[idx] = p->line ? p->line : 1;
    rc = parse_milli(p, info->key, tok[1], 0, 1000000000000000ULL, &milli);
    if (rc != 0)
        return rc;
    rc = sim_cost_param_set_milli(&p->spec.cost, info->key, milli);
    if (rc != 0) {
        PERR(p, "%s is out of range (got %s)", info->key, tok[1]);
        return -EINVAL;
    }
    return 0;
}

static int parse_line(struct parser *p, char *line)
{
    char *tok[MAX_TOKENS];
    char *hash = strchr(line, '#');
    int n;

    if (hash != NULL)
        *hash = '\0';
    n = tokenize(line, tok);
    if (n == 0)
        return 0;
    for (int k = 0; k < NUM_KEYS; k++) {
        const struct key_def *d = &key_defs[k];

        if (strcmp(tok[0], d->name) != 0)
            continue;
        if (n > MAX_TOKENS) {
            PERR(p, "%s: too many values", d->name);
            return -EINVAL;
        }
        if (n - 1 < d->min_values || n - 1 > d->max_values) {
            if (d->min_values == d->max_values)
                PERR(p, "%s takes %d value%s (got %d)", d->name, d->min_values,
                     d->min_values > 1 ? "s" : "", n - 1);
            else
                PERR(p, "%s takes %d to %d values (got %d)", d->name, d->min_values, d->max_values,
                     n - 1);
            return -EINVAL;
        }
        if (k != K_LINK && p->seen[k] != 0 && !p->override) {
            PERR(p, "%s is set twice (first on line %d)", d->name, p->seen[k]);
            return -EINVAL;
        }
        p->seen[k] = p->line;
        return apply_key(p, (enum key)k, tok + 1, n - 1);
    }
    return parse_cost_key(p, tok, n);
}

/* Defaults that depend on other keys, then the build. */
static int finish(struct parser *p, sim_topology_t **out)
{
    struct sim_topo_spec *s = &p->spec;

    if (p->seen[K_IPUS] == 0) {
        sim_errf(p->err, p->errlen, "%s: missing required key 'ipus'", p->path);
        return -EINVAL;
    }
    if (p->seen[K_ILD_SIZE] == 0)
        s->ild_size = s->num_ipus;
    if (p->seen[K_WIRING] == 0)
        s->wiring = s->ild_size % 4 == 0 ? SIM_WIRING_LADDER
                    : s->ild_size == 1   ? SIM_WIRING_NONE
                                         : SIM_WIRING_RING;
    if (p->seen[K_NAME] == 0)
        sim_base_name(p->path, "custom", s->name, sizeof(s->name));
    s->links = p->links;
    s->num_links = p->num_links;
    return sim_topo_build(s, out, p->err, p->errlen);
}

/* Reads the file at P->path into P->spec. */
static int parse_path(struct parser *p)
{
    char buf[MAX_LINE_CHARS + 1];
    FILE *f;
    int rc;

    f = sim_open_text(p->path, "topology file", &rc, p->err, p->errlen);
    if (f == NULL)
        return rc;
    sim_topo_spec_defaults(&p->spec);
    p->spec.origin = p->path;
    for (;;) {
        char why[64];

        p->line++;
        rc = sim_read_line(f, buf, MAX_LINE_CHARS, why, sizeof(why));
        if (rc < 0)
            PERR(p, "%s", why);
        if (rc <= 0)
            break;
        if (p->line > MAX_LINES) {
            PERR(p, "file longer than %d lines", MAX_LINES);
            rc = -EINVAL;
            break;
        }
        rc = parse_line(p, buf);
        if (rc != 0)
            break;
    }
    fclose(f);
    return rc;
}

int sim_topo_parse_file(const char *path, sim_topology_t **out, char *err, size_t errlen)
{
    struct parser p = {.path = path, .err = err, .errlen = errlen};
    int rc;

    *out = NULL;
    if (path == NULL) {
        sim_errf(err, errlen, "no topology file given");
        return -EINVAL;
    }
    rc = parse_path(&p);
    if (rc == 0)
        rc = finish(&p, out);
    free(p.links);
    return rc;
}

/* Applies the ","-separated KEY=VALUE settings of LIST to P->spec. */
static int apply_overrides(struct parser *p, const char *spec, const char *list)
{
    static const char *const fixed[] = {"name", "ipus", "ild_size", "wiring", "link"};
    char buf[MAX_LINE_CHARS + 1];
    const char *at = list;

    p->override = 1;
    for (int i = 1; *at; i++) {
        size_t n = strcspn(at, ",");
        char *eq;

        if (n == 0 || n > MAX_LINE_CHARS) {
            sim_errf(p->err, p->errlen, "topology '%s': setting %d is empty or too long", spec, i);
            return -EINVAL;
        }
        memcpy(buf, at, n);
        buf[n] = '\0';
        eq = strchr(buf, '=');
        if (eq == NULL || strchr(buf, ' ') || strchr(buf, '#')) {
            sim_errf(p->err, p->errlen, "topology '%s': '%s' is not KEY=VALUE", spec, buf);
            return -EINVAL;
        }
        *eq = ' ';
        for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
            if (strncmp(buf, fixed[k], strlen(fixed[k])) == 0 && buf[strlen(fixed[k])] == ' ') {
                sim_errf(p->err, p->errlen,
                         "topology '%s': %s cannot be overridden (write a topology file)", spec,
                         fixed[k]);
                return -EINVAL;
            }
        }
        p->line = i;
        if (parse_line(p, buf) != 0)
            return -EINVAL;
        at += n + (at[n] == ',');
    }
    return 0;
}

int sim_topo_parse_overrides(const char *spec, sim_topology_t **out, char *err, size_t errlen)
{
    char base[MAX_LINE_CHARS + 1];
    size_t n = strcspn(spec, ",");
    struct parser p = {.path = spec, .err = err, .errlen = errlen};
    int rc, preset;

    *out = NULL;
    if (n == 0 || n > MAX_LINE_CHARS) {
        sim_errf(err, errlen, "topology '%s': no preset or file before the first ','", spec);
        return -EINVAL;
    }
    memcpy(base, spec, n);
    base[n] = '\0';
    preset = sim_topo_preset_spec(base, &p.spec, NULL, 0) == 0;
    if (!preset) {
        p.path = base;
        rc = parse_path(&p);
        if (rc == -ENOENT)
            sim_errf(err, errlen,
                     "unknown topology '%s': not a preset (M2000, POD16, POD64, "
                     "POD128, POD256) and no such file",
                     base);
        if (rc != 0)
            goto out_free;
    }
    p.path = spec;
    rc = apply_overrides(&p, spec, spec + n + 1);
    p.path = preset ? spec : base; /* a file's default name is its base name */
    if (rc == 0)
        rc = preset ? sim_topo_build(&p.spec, out, err, errlen) : finish(&p, out);
out_free:
    free(p.links);
    return rc;
}
