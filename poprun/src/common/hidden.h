/*
 * The options poprun passes to itself, never typed by a user: what the launcher puts on
 * mpirun's command line and the wrapper's side (main.c) recognises.
 *
 *   poprun --_instance TOKEN ... -- PROGRAM   mpirun's rank: the instance wrapper
 * (wrapper/instance.h) poprun --_orted ORTED-ARGS...             the launch agent of mpirun's
 * daemons inside a Slurm allocation (wrapper/orted_agent.h)
 */
#ifndef POPRUN_HIDDEN_H
#define POPRUN_HIDDEN_H

#define POPRUN_OPT_INSTANCE "--_instance"
#define POPRUN_OPT_ORTED    "--_orted"

#endif /* POPRUN_HIDDEN_H */
