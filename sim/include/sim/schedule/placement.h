/*
 * Placements of a transformer's sublayers on the IPUs of a replica, and the fragments (forward
 * pipeline stages) they make; see sim/plan/plan.h for how a plan uses them.
 *
 * A sublayer is a maximal run of consecutive layers of one part (attention or ffn, sim/cost/layer.h).
 * With the counts att[k] and ffn[k] of IPU k, attention sublayer j goes to the first IPU whose
 * running sum of att passes j, feed-forward sublayer j likewise by ffn; the embedding and the
 * heads go to IPU 0. Trace, BERT-Large with 3/3,7/7,7/7,7/7: IPU 0 holds the embedding and
 * encoder layers 0-2, IPU 1 layers 3-9, IPU 2 10-16, IPU 3 17-23; the fragments are IPU 0
 * (embedding, 0-2), IPU 1, IPU 2, IPU 3, and IPU 0 again (the heads).
 */
#ifndef SIM_PLACEMENT_H
#define SIM_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "sim/cost/ipu_cost.h"
#include "sim/model/model_def.h"

#define SIM_PLAN_MAX_STAGES 256

/* Attention and feed-forward sublayers per IPU of a replica (sim-step --att-ffn-placement). */
typedef struct sim_placement {
    int ipus; /* entries, the stage count */
    uint32_t att[SIM_PLAN_MAX_STAGES], ffn[SIM_PLAN_MAX_STAGES];
} sim_placement_t;

/* A forward pipeline stage: layers of one IPU that run one after another. */
typedef struct sim_fragment {
    int stage;                /* its IPU */
    uint32_t at, count;       /* its layers: a plan's order[at .. at + count), in model order */
    sim_cost_t fwd, bwd, rec; /* per micro-batch */
    uint64_t out_values;      /* values per micro-batch to the next fragment (0 on the last) */
    uint32_t in_flight;       /* micro-batches whose activations it holds at once */
} sim_fragment_t;

/* Parses "4/5,7/6,6/7,7/6" (attention/feed-forward sublayers per IPU) or, with SAME, "3,7,7,7"
 * (both counts equal) into OUT. Returns 0, or -EINVAL with the reason in ERR. */
int sim_placement_parse(const char *text, int same, sim_placement_t *out, char *err, size_t len);

/* Checks PL against M for a replica of STAGES IPUs: one entry per stage, every layer of M in a
 * part, the counts summing to M's attention and feed-forward sublayers. Returns 0, or -EINVAL
 * with one line in ERR. */
int sim_placement_check(const sim_model_t *m, const sim_placement_t *pl, int stages, char *err,
                        size_t errlen);

/* Fills ORDER (M's layer count of entries) and *FRAGS (malloc'd, *N of them) for the checked
 * placement: fragment k holds IPU k's layers but the heads, in model order (IPU 0: the
 * embedding first); a last fragment holds the heads, on IPU 0. Only the layer fields are set.
 * Returns 0 or -ENOMEM. */
int sim_placement_fragments(const sim_model_t *m, const sim_placement_t *pl, uint32_t *order,
                            sim_fragment_t **frags, int *n);

#endif /* SIM_PLACEMENT_H */
