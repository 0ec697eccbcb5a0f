/*
 * Opening a model by name (sim/model/model.h): a built-in model or a model file.
 */
#include "sim/model/model.h"

#include <errno.h>
#include <string.h>

#include "base/text.h"

int sim_model_open(const char *name, int seq, double per_pack, sim_model_t *m, char *err,
                   size_t errlen)
{
    int rc;

    if (per_pack != 0 && !(per_pack >= 1 && per_pack <= 64)) {
        sim_errf(err, errlen, "sequences per pack must be from 1 to 64 (got %g)", per_pack);
        return -EINVAL;
    }

    if (name != NULL && strcmp(name, "resnet50") == 0) {
        rc = sim_model_resnet50(m);
    } else if (name != NULL && strcmp(name, "bert-large") == 0) {
        if (seq != 128 && seq != 512) {
            sim_errf(err, errlen, "bert-large: sequence length must be 128 or 512 (got %d)", seq);
            return -EINVAL;
        }
        rc = sim_model_bert_large(m, seq, per_pack > 0 ? per_pack : 1);
    } else {
        rc = sim_model_load(name, m, err, errlen);
        if (rc == 0 && per_pack > 0)
            m->samples_per_unit = per_pack;
        return rc;
    }
    if (rc != 0)
        sim_errf(err, errlen, "%s: %s", name, strerror(-rc));
    return rc;
}
