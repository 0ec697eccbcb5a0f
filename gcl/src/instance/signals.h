/* libgcl and signals: the dispositions its dependencies install and libgcl undoes (signals.c).
 * The preemption flag and agreement of gcl/preempt.h are api/preempt.c's. */
#ifndef GCL_SIGNALS_H
#define GCL_SIGNALS_H

/* Gives SIGINT, SIGTERM and the crash signals back their default action wherever the installed
 * handler belongs to a library known to call exit() from it (the PSM libraries of libfabric).
 * Runs from a constructor of libgcl; safe to call again. Returns how many it restored. */
int gcl_signals_restore_defaults(void);

#endif /* GCL_SIGNALS_H */
