/*
 * The Slurm allocation poprun runs in (a batch script of sbatch, the shell of salloc, or a step
 * of either): its nodes and the tasks of each, read from the variables Slurm gives a job, and
 * where poprun's instances go on them.
 *
 * Variables read, only when SLURM_JOB_ID (or its older name SLURM_JOBID) is set; outside an
 * allocation none is, and nothing changes:
 *   SLURM_JOB_NODELIST    the allocation's nodes, a host list with bracketed ranges
 *                         (h[1-2], node[01-04,07], gpu1,cpu[3-4]; hostlist.h)
 *   SLURM_TASKS_PER_NODE  the tasks of each node, in the order of the node list: "2(x3),1" is
 *                         2, 2, 2 and 1 (SLURM_JOB_CPUS_PER_NODE, the CPUs, when it is unset)
 *
 * Rules (I instances, N nodes, T tasks in all):
 *   - I > T is refused, naming both numbers.
 *   - Without -H/--hostfile the instances go to the allocation's nodes in the order of the node
 *     list, the same number on each host (the plan's rule), each host taking at most its tasks:
 *     to all N nodes when that works, else to the first H, H the largest number below N that
 *     does (4 instances on 2 nodes of 2 tasks: 2 each; 1 instance: 1 on the first node).
 *   - With -H/--hostfile every host must be a node of the allocation and take at most its tasks.
 */
#ifndef POPRUN_SLURM_H
#define POPRUN_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

struct slurm_alloc {
    char *job_id;
    char *nodelist;        /* SLURM_JOB_NODELIST as Slurm gave it */
    const char *tasks_var; /* the variable the tasks came from */
    char *tasks_spec;      /* its value */
    struct strvec nodes;   /* the node list, expanded */
    int *tasks;            /* tasks of each node (nodes.n entries) */
    int total_tasks;
};

/* Parses an allocation from the values of its variables (TASKS_VAR names the variable that
 * TASKS_SPEC came from, for messages). Returns 0, or -1 with one line in ERR naming the
 * variable and the value that is not understood. */
int slurm_alloc_parse(const char *job_id, const char *nodelist, const char *tasks_var,
                      const char *tasks_spec, struct slurm_alloc *a, char *err, size_t errlen);

/* Reads the allocation from the environment: 0 when there is none (SLURM_JOB_ID unset), 1 with
 * A filled, -1 with one line in ERR (a variable missing or not understood, or no srun on PATH:
 * mpirun starts its daemons on an allocation's nodes with srun). */
int slurm_alloc_from_env(struct slurm_alloc *a, char *err, size_t errlen);

/* The hosts of a job of NUM_INSTANCES instances on allocation A (rules above), appended to
 * HOSTS. Returns 0, or -1 with one line in ERR. */
int slurm_alloc_pick(const struct slurm_alloc *a, int num_instances, struct strvec *hosts,
                     char *err, size_t errlen);

/* Checks HOSTS, named by the user with FROM ("-H" or "--hostfile"), against allocation A for
 * NUM_INSTANCES instances. Returns 0, or -1 with one line in ERR. */
int slurm_alloc_check(const struct slurm_alloc *a, const struct strvec *hosts, int num_instances,
                      const char *from, char *err, size_t errlen);

/* The line --print-topology and --dry-run show: "Slurm allocation 12: nodes h[1-2]
 * (SLURM_JOB_NODELIST), tasks 2(x2) (SLURM_TASKS_PER_NODE)". Newly allocated. */
char *slurm_alloc_describe(const struct slurm_alloc *a);

void slurm_alloc_free(struct slurm_alloc *a);

#endif /* POPRUN_SLURM_H */
