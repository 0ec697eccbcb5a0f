/*
 * poprun's main flow for a job: validate, plan, print, launch, report.
 */
#ifndef POPRUN_JOB_H
#define POPRUN_JOB_H

#include "cli/options.h"

/* Runs the job described by O (not in instance mode). Returns poprun's exit status: 0, the first
 * failing instance's status, 128+N for signal N, or 2 for a usage error (reported on stderr as
 * one "poprun: ..." line). */
int job_main(const struct poprun_options *o);

#endif /* POPRUN_JOB_H */
