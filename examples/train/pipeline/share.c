/* A replica's share of a step; see share.h. */
#include "pipeline/share.h"

void train_step_share(const train_job_t *job, int replica, int replicas, int *first, int *count,
                      float *scale)
{
    long micros = (long)job->replicas * job->accumulation; /* the step's, as the job started */
    long lo = micros * replica / replicas, hi = micros * (replica + 1) / replicas;
    *first = (int)lo;
    *count = (int)(hi - lo);
    *scale = replicas == job->replicas ? 1.0f : (float)replicas / (float)job->replicas;
}
