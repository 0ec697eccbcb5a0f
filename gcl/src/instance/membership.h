/*
 * An elastic instance's membership (poprun --elastic): its connection to poprun's store, the
 * membership the store announced, and applying it to the instance's layout. gcl_init opens it
 * instead of starting MPI; a resize (instance/resize.c) asks it for the next membership.
 */
#ifndef GCL_INSTANCE_MEMBERSHIP_H
#define GCL_INSTANCE_MEMBERSHIP_H

#include "base/err.h"
#include "base/param.h"
#include "gcl/elastic.h"
#include "job/bootstrap.h"
#include "job/elastic/store.h"
#include "job/hostbox.h"
#include "job/job.h"
#include "job/popdist.h"

typedef struct gcl_elastic gcl_elastic_t;

/* Whether this process is an instance of an elastic job: poprun's variables (PD) and
 * GCL_ELASTIC_STORE are set. */
int gcl_elastic_wanted(const gcl_popdist_t *pd);

/* What the membership changes and where it reports: the instance's parts, which live as long as
 * it does. */
typedef struct {
    const gcl_params_t *params;
    gcl_popdist_t *pd;
    gcl_job_t *job;
    gcl_hostbox_t *hb; /* rung on news */
    gcl_boot_t **boot; /* each membership's bootstrap goes here */
    gcl_err_t *err;
} gcl_membership_setup_t;

/* Connects to the store (as a replacement when GCL_ELASTIC_JOIN=1), waits for the first
 * membership this instance is part of (a replacement: until the job's next step boundary),
 * applies it and makes its bootstrap. *OUT is set even on failure (gcl_membership_close it). */
gcl_status_t gcl_membership_open(const gcl_membership_setup_t *w, gcl_elastic_t **out);

/* Asks for the next membership (FAILED: this instance's run failed), waits for it, applies it and
 * makes its bootstrap (the old one must be destroyed). *FINAL is set when no later resize can
 * mend a failure (the store's STOP, poprun gone, out of time). */
gcl_status_t gcl_membership_next(gcl_elastic_t *e, int failed, int *final);

/* Whether the store's news may ring the host box's IPUs (it exists, and is this membership's). */
void gcl_membership_alarms(gcl_elastic_t *e, int on);

/* The membership, and its latest change, into *OUT. */
void gcl_membership_info(const gcl_elastic_t *e, gcl_elastic_info_t *out);

/* The current membership's number (its epoch). */
int gcl_membership_epoch(const gcl_elastic_t *e);

/* The store's news of the current membership, for the IPUs' liveness checks; NULL for NULL. */
const gcl_store_news_t *gcl_membership_news(const gcl_elastic_t *e);

/* gcl_finalize's end: says BYE when CLEAN, and closes the store. NULL is fine. */
void gcl_membership_close(gcl_elastic_t *e, int clean);

#endif /* GCL_INSTANCE_MEMBERSHIP_H */
