/*
 * The launch agent of mpirun's daemons inside a Slurm allocation (mpirun --mca
 * orte_launch_agent "POPRUN --_orted"): orted started with SIGTERM blocked.
 *
 * Inside an allocation mpirun starts its daemon (orted) on each other node with srun, as a job
 * step. Slurm signals every process of every step: scancel sends SIGTERM, and sbatch
 * --signal=TERM@60 sends it 60 s before the time limit (to the steps, not the batch script). An
 * orted that gets SIGTERM kills its instances and exits, and mpirun then ends the job as if the
 * node were lost (poprun: "host h2 is lost"). The instances on that node get the same SIGTERM
 * from Slurm, and treat it as the preemption it is (instance.h); their daemon must outlive it.
 * A blocked signal stays blocked across exec, and orted does not unblock it; it still ends when
 * mpirun tells it to, and Slurm's SIGKILL (KillWait after the SIGTERM) ends it in any case.
 * orted's own children, the instance wrappers, start with every signal unblocked (OpenMPI resets
 * the mask before it execs them).
 */
#ifndef POPRUN_ORTED_AGENT_H
#define POPRUN_ORTED_AGENT_H

/* Blocks SIGTERM and execs orted (from PATH) with ARGV[0..ARGC-1]. Returns only on failure,
 * having said why: 127. */
int orted_agent_main(int argc, char **argv);

#endif /* POPRUN_ORTED_AGENT_H */
