/*
 * Fault injection, for tests only (sqlite's "simulated I/O errors"): GCL_FAULT_INJECT makes the
 * Nth allocation, shared-memory mapping or transport post of this process fail, so that a test
 * can walk every cleanup path of libgcl one failure at a time.
 *
 *   GCL_FAULT_INJECT=KIND:N[@I][,KIND:N[@I]...]     e.g. alloc:37, post:3@1, alloc:5,map:2
 *
 *   alloc  every gcl_malloc, gcl_calloc, gcl_realloc, gcl_strdup and gcl_posix_memalign
 *          (base/alloc.h): every heap allocation libgcl's own code makes (not those of
 *          collectives/, sim/, choice/, MPI or libfabric). The failing one returns NULL
 *          (posix_memalign: ENOMEM), errno ENOMEM, as malloc does when the host is out of memory.
 *   map    every gcl_mmap, gcl_shm_open and gcl_memfd_create (base/alloc.h): the host box, the
 *          shareable IPU memory of gcl_ipu_malloc, peers' IPU memory mapped for host-direct
 *          calls, phantom mode's address space. The failing one returns MAP_FAILED or -1, errno ENOMEM.
 *   post   every message piece handed to a transport: a piece posted in a shared-memory slot
 *          (shm), an isend or irecv of the mpi or ofi backend. The failing one fails as the
 *          transport's own failure would (the call returns GCL_ERR_TRANSPORT).
 *   resize every resize of an elastic job (gcl_elastic_resize) on this instance: the failing one
 *          kills the process (SIGKILL) once the new membership has formed, while it is being
 *          built: a fault during the resize itself, which the others must survive.
 *   N      1, 2, ...: the Nth event of that kind fails, once; every other event succeeds.
 *   @I     only in instance I (POPDIST_INSTANCE_INDEX under poprun; OMPI_COMM_WORLD_RANK or
 *          PMI_RANK under a plain mpirun; else 0); the other instances count but never fail.
 *   A kind appears at most once. "" (the default) injects nothing.
 *
 * Counting: every gcl_init starts the counts at zero before its first allocation, and from then
 * on every event of the kind in this process counts, from whichever thread (IPU threads count
 * concurrently, atomically), through gcl_finalize, until the next gcl_init. So alloc:1 is
 * gcl_init's first allocation. Which event is the Nth can vary from run to run when IPU threads
 * race, but every N is one event.
 *
 * What it says (warn level, in the processes it applies to): the failing event as it happens
 * ("GCL_FAULT_INJECT: allocation #37 of this process fails on purpose"), and at the end of
 * gcl_finalize the counts ("GCL_FAULT_INJECT=alloc:37: 120 allocations, 4 mappings, 56 posts
 * since gcl_init; alloc:37 failed" or "... alloc:200 not reached"), so a test can walk N = 1, 2,
 * ... until a run no longer reaches N.
 */
#ifndef GCL_FAULT_H
#define GCL_FAULT_H

#include <stddef.h>

typedef enum {
    GCL_FAULT_ALLOC,
    GCL_FAULT_MAP,
    GCL_FAULT_POST,
    GCL_FAULT_RESIZE,
    GCL_FAULT_KINDS
} gcl_fault_kind_t;

/* A parsed GCL_FAULT_INJECT: for each kind, the event that fails (0: none) and the only
 * instance where it does (-1: every instance). */
typedef struct {
    long long nth[GCL_FAULT_KINDS];
    int instance[GCL_FAULT_KINDS];
} gcl_fault_spec_t;

/* Parses TEXT (the variable's value) into *OUT (may be NULL). Returns 0, or -1 with a sentence
 * saying what is wrong in WHY. */
int gcl_fault_parse(const char *text, gcl_fault_spec_t *out, char *why, size_t len);

/* gcl_init's first step: reads GCL_FAULT_INJECT (a malformed value arms nothing: gcl_init
 * refuses it right after) and starts every count at zero, as instance INSTANCE of the job (an
 * entry KIND:N@I fires in instance I only). */
void gcl_fault_arm(int instance);
/* Arms SPEC as this process's instance INSTANCE (for tests); NULL disarms. */
void gcl_fault_arm_spec(const gcl_fault_spec_t *spec, int instance);
/* Whether an event of KIND is still to fail in this process (no event is counted). */
int gcl_fault_pending(gcl_fault_kind_t kind);
/* Counts one event of KIND; 1 when it is the one that must fail (said at warn level). */
int gcl_fault_hit(gcl_fault_kind_t kind);
/* A network backend's post (KIND post): 1 when it must fail, with the backend's sentence for it
 * ("NAME: posting a send with instance PEER failed: injected ...") in ERR. */
int gcl_fault_post(char *err, size_t len, const char *name, int send, int peer);
/* Events of KIND counted since the process was last armed. */
long long gcl_fault_count(gcl_fault_kind_t kind);
/* The end of gcl_finalize: the counts, at warn level, when injection applies to this process. */
void gcl_fault_report(void);

#endif /* GCL_FAULT_H */
