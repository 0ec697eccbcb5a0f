/*
 * Placements of attention and feed-forward sublayers (sim/schedule/placement.h).
 */
#include "sim/schedule/placement.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

/* Sublayers of PART in M, and which sublayer each layer of that part is in (INDEX may be NULL). */
static uint32_t sublayers(const sim_model_t *m, sim_part_t part, uint32_t *index)
{
    uint32_t n = 0;

    for (size_t i = 0; i < m->num_layers; i++) {
        if (m->layers[i].part != part)
            continue;
        if (i == 0 || m->layers[i - 1].part != part)
            n++;
        if (index)
            index[i] = n - 1;
    }
    return n;
}

int sim_placement_check(const sim_model_t *m, const sim_placement_t *pl, int stages, char *err,
                        size_t errlen)
{
    uint32_t att = sublayers(m, SIM_PART_ATTENTION, NULL), ffn = sublayers(m, SIM_PART_FFN, NULL);
    uint64_t sa = 0, sf = 0;

    if (pl->ipus != stages) {
        sim_errf(err, errlen, "the placement lists %d IPUs, but a replica has %d stages", pl->ipus,
                 stages);
        return -EINVAL;
    }
    for (size_t i = 0; i < m->num_layers; i++) {
        if (m->layers[i].part == SIM_PART_NONE) {
            sim_errf(err, errlen,
                     "%s: layer %s has no part (a placement by sublayers needs every layer "
                     "marked embedding, attention, ffn or head)",
                     m->name, m->layers[i].name);
            return -EINVAL;
        }
    }
    for (int k = 0; k < pl->ipus; k++) {
        sa += pl->att[k];
        sf += pl->ffn[k];
    }
    if (sa != att || sf != ffn) {
        sim_errf(err, errlen,
                 "the placement holds %llu attention and %llu feed-forward sublayers, but %s has "
                 "%u and %u",
                 (unsigned long long)sa, (unsigned long long)sf, m->name, att, ffn);
        return -EINVAL;
    }
    return 0;
}

/* The IPU of sublayer J by the running sum of COUNTS over IPUS. */
static int ipu_of(const uint32_t *counts, int ipus, uint32_t j)
{
    uint32_t sum = 0;

    for (int k = 0; k < ipus; k++) {
        sum += counts[k];
        if (j < sum)
            return k;
    }
    return ipus - 1;
}

int sim_placement_fragments(const sim_model_t *m, const sim_placement_t *pl, uint32_t *order,
                            sim_fragment_t **frags, int *count)
{
    size_t n = m->num_layers;
    uint32_t *index = calloc(n ? n : 1, sizeof(*index));
    int *on = calloc(n ? n : 1, sizeof(*on));
    int heads = 0, nf, rc = 0;
    uint32_t at = 0;

    for (size_t i = 0; i < n; i++)
        heads |= m->layers[i].part == SIM_PART_HEAD;
    nf = pl->ipus + heads;
    *frags = calloc((size_t)nf, sizeof(**frags));
    if (!index || !on || !*frags) {
        rc = -ENOMEM;
        goto out_free;
    }
    sublayers(m, SIM_PART_ATTENTION, index);
    sublayers(m, SIM_PART_FFN, index);
    for (size_t i = 0; i < n; i++) {
        sim_part_t part = (sim_part_t)m->layers[i].part;

        on[i] = part == SIM_PART_ATTENTION ? ipu_of(pl->att, pl->ipus, index[i])
                : part == SIM_PART_FFN     ? ipu_of(pl->ffn, pl->ipus, index[i])
                : part == SIM_PART_HEAD    ? -1 /* the last fragment */
                                           : 0;
    }
    for (int f = 0; f < nf; f++) {
        int ipu = f < pl->ipus ? f : 0, want = f < pl->ipus ? f : -1;

        (*frags)[f] = (sim_fragment_t){.stage = ipu, .at = at};
        for (size_t i = 0; i < n; i++)
            if (on[i] == want)
                order[at++] = (uint32_t)i;
        (*frags)[f].count = at - (*frags)[f].at;
    }
    *count = nf;
out_free:
    free(on);
    free(index);
    return rc;
}

/* A count of at most 4 digits at *S, advancing it. */
static int count(const char **s, uint32_t *out)
{
    char *end;
    unsigned long v;

    if (**s < '0' || **s > '9')
        return -1;
    v = strtoul(*s, &end, 10);
    if (end - *s > 4)
        return -1;
    *s = end;
    *out = (uint32_t)v;
    return 0;
}

int sim_placement_parse(const char *text, int same, sim_placement_t *out, char *err, size_t len)
{
    const char *s = text ? text : "";
    const char *form = same ? "N,N,... (encoder layers per IPU)"
                            : "A/F,A/F,... (attention/feed-forward sublayers per IPU)";

    memset(out, 0, sizeof(*out));
    while (1) {
        if (out->ipus == SIM_PLAN_MAX_STAGES || count(&s, &out->att[out->ipus]) != 0)
            break;
        if (same)
            out->ffn[out->ipus] = out->att[out->ipus];
        else if (*s != '/' || (s++, count(&s, &out->ffn[out->ipus]) != 0))
            break;
        out->ipus++;
        if (*s == '\0')
            return 0;
        if (*s++ != ',')
            break;
    }
    sim_errf(err, len, "'%.60s' is not %s, at most %d IPUs", text ? text : "", form,
             SIM_PLAN_MAX_STAGES);
    return -EINVAL;
}
