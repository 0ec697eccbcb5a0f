/* Preemption (gcl/preempt.h, preempt.c): what the rest of libgcl needs of it, beside the
 * public calls (the same concept at two layers: gcl/README.md, "One name for each concept"). */
#ifndef GCL_PREEMPT_INTERNAL_H
#define GCL_PREEMPT_INTERNAL_H

struct gcl_instance;
/* Frees the meeting state of gcl_preempt_agree (gcl_finalize). */
void gcl_preempt_free(struct gcl_instance *inst);
/* An elastic job: whether the last agreement said that instances wait to join (the same answer
 * on every IPU of the job). */
int gcl_preempt_joiners(struct gcl_instance *inst);

#endif /* GCL_PREEMPT_INTERNAL_H */
