/*
 * Diagnostics: what libgcl knows about its peers when a call goes wrong, as sentences. Peer
 * descriptions, call signatures side by side, the liveness of local peers, the mismatch proofs
 * a host's shared memory holds, and the "poison" mark that tells every replica of a mismatched
 * call about it. A leaf: it reads the job layout and the host box and calls nothing above them.
 */
#ifndef GCL_DIAG_H
#define GCL_DIAG_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "job/hostbox.h"
#include "job/job.h"
#include "base/vocab/signature.h"

/* One IPU's view of one call: who it is, the group's IPUs, and the call's key and signature. */
typedef struct {
    const gcl_job_t *job;
    gcl_hostbox_t *hb;
    uint32_t run_gen; /* the instance's gcl_run generation */
    int me_ipu;       /* this IPU's global index */
    const int *ipus;  /* [n]: the group's global IPUs in rank order */
    int n, rank;
    uint64_t key0; /* communicator key << 32 | sequence */
    const gcl_sig_t *sig;
    /* The communicator's recent calls as this IPU made them, at [seq % nhist] (seq inside
     * tells whether an entry is still that call's); NULL when unknown. */
    const gcl_sig_t *hist;
    int nhist;
} gcl_call_view_t;

/* "mismatched calls: replica 3 (...) called A; replica 2 (...) called B", naming both sides. */
void gcl_diag_mismatch_text(const gcl_job_t *j, int ipu_a, const gcl_sig_t *a, int ipu_b,
                            const gcl_sig_t *b, char *buf, size_t len);

/* A receiver's check of an incoming message's signature and size against its own call: GCL_OK,
 * or GCL_ERR_MISMATCH recorded in ERR with both sides described. */
gcl_status_t gcl_diag_check_message(gcl_err_t *err, const gcl_job_t *j, int me_ipu, int peer_ipu,
                                    const gcl_sig_t *mine, const gcl_sig_t *theirs,
                                    uint64_t my_bytes, uint64_t their_bytes);

/* Whether global IPU IPU (on this host) is known to have failed, returned from its program of
 * generation RUN_GEN, left the job or died; fills WHY. Always 0 for IPUs of other hosts. */
/* Whether a member of V's group on this host failed (then the call can never complete, whoever
 * it waits on now): 1 and the first one with its reason in WHY. */
int gcl_diag_member_failed(const gcl_call_view_t *v, char *why, size_t len);
/* Whether an IPU of this host of another instance than this one failed: 1 and the first one with
 * its reason in WHY. */
int gcl_diag_other_failed(const gcl_job_t *j, gcl_hostbox_t *hb, char *why, size_t len);
int gcl_diag_peer_gone(const gcl_job_t *j, gcl_hostbox_t *hb, uint32_t run_gen, int ipu, char *why,
                       size_t len);

/* What an IPU's peers can see of it: its life and its latest call (valid when read whole). */
typedef struct {
    uint32_t state, run_gen; /* GCL_IPU_*, and the gcl_run it is in */
    uint64_t last_call;      /* key0 of the latest collective it entered */
    gcl_sig_t sig;           /* that call's signature */
    int valid;
} gcl_peer_life_t;

/* The life of the IPU at host-box index HL, as its host box shows it. */
void gcl_diag_life(gcl_hostbox_t *hb, int hl, gcl_peer_life_t *out);
/* Proofs from a peer's life (L, of global IPU IPU), wherever it was learnt: its latest call is
 * this one, or an earlier one of the communicator that this IPU remembers, made another way; it
 * went past this call (see diag.c); it is still in an earlier call of the communicator. The
 * first two give 1 and a sentence. */
int gcl_diag_same_call_differs(const gcl_call_view_t *v, int ipu, const gcl_peer_life_t *l,
                               char *why, size_t len);
int gcl_diag_past(const gcl_call_view_t *v, int ipu, const gcl_peer_life_t *l, int timed_out,
                  char *why, size_t len);
int gcl_diag_behind(const gcl_call_view_t *v, const gcl_peer_life_t *l);

/* Publishes that this IPU (host-box index HL) entered call KEY0 with signature SIG. */
void gcl_diag_publish_call(gcl_hostbox_t *hb, int hl, uint64_t key0, const gcl_sig_t *sig);

/* A proof that the call is mismatched, from what local peers published or left unclaimed in
 * this IPU's slots; with TIMED_OUT also a peer that went past the call. 1 and a sentence. */
int gcl_diag_find_mismatch(const gcl_call_view_t *v, int timed_out, char *why, size_t len);
/* Local peer IPU went past this call without making it (see diag.c). 1 and a sentence. */
int gcl_diag_went_past(const gcl_call_view_t *v, int ipu, int timed_out, char *why, size_t len);
/* Whether a local member of the group is still in an earlier call of the communicator. */
int gcl_diag_peer_behind(const gcl_call_view_t *v);
/* Local members that have not entered this call yet, described into BUF ("" if none). */
void gcl_diag_absent(const gcl_call_view_t *v, char *buf, size_t len);

/* Whether a peer marked call KEY0 (or an earlier one of its communicator) of this IPU
 * (host-box index HL) as mismatched; then ERR gets the reason and 1 is returned. */
int gcl_diag_poisoned(gcl_hostbox_t *hb, int hl, uint64_t key0, gcl_err_t *err);
/* Marks call KEY0 as mismatched, with REASON, for every other local member of the group. */
void gcl_diag_poison_group(const gcl_call_view_t *v, const char *reason);
/* Marks call KEY0 as mismatched, with REASON, for the IPU at host-box index HL (the first
 * reason stays), and wakes it. */
void gcl_diag_poison_ipu(gcl_hostbox_t *hb, int hl, uint64_t key0, const char *reason);

#endif /* GCL_DIAG_H */
