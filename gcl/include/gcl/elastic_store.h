/*
 * The elastic store: the wire protocol between poprun (the server, in its launcher process) and
 * the instances of a `poprun --elastic` job (libgcl, the clients). Header-only; poprun includes
 * it without linking libgcl, as it includes popdist_env.h.
 *
 * Why a store: an elastic job must go on when an instance dies, and MPI cannot (OpenMPI 4.1 has
 * no ULFM: after a death the world communicator is broken). So in elastic mode libgcl uses no MPI
 * at all; mpirun (--enable-recovery) only starts the processes, and the few operations over
 * instances that start-up, the stop agreement of each step and shut-down need (allgather,
 * broadcast, barrier) go through poprun, which every host can reach. Each instance keeps one TCP
 * connection to it: a process that dies closes it (seen at once), a host that is lost stops its
 * beats. poprun keeps the job's membership: an epoch number and the instances in it, in rank
 * order. When an instance is lost, poprun tells the others (NEWS), fails the bootstrap call in
 * flight (COLL_FAIL), and forms the next epoch once every survivor has asked for it (RESIZE);
 * an instance that replaces a lost one (HELLO with join) is taken in at the next resize.
 *
 * Every message is a gcl_store_head_t, then BYTES of payload. Integers are in the host's byte
 * order (poprun and the instances run the same build).
 *
 *   client -> server                          server -> client
 *   HELLO  arg slot, payload hello_t          WELCOME (accepted) or REFUSE (text)
 *   BEAT   every GCL_HEARTBEAT_S                EPOCH   epoch, arg rank, payload epoch_t + lists
 *   COLL   epoch, seq, arg root (-1: allgather) COLL_DONE  result; flags: F_JOINERS
 *   RESIZE epoch being left                   COLL_FAIL  text (a member was lost)
 *   BYE    after gcl_finalize's barrier       NEWS    epoch, arg slot lost, text why
 *                                             STOP    text: the job cannot go on
 */
#ifndef GCL_ELASTIC_STORE_H
#define GCL_ELASTIC_STORE_H

#include <stdint.h>

/* Set by poprun --elastic for every instance. */
#define GCL_ELASTIC_ENV_STORE        "GCL_ELASTIC_STORE"        /* IPV4:PORT of the store */
#define GCL_ELASTIC_ENV_TOKEN        "GCL_ELASTIC_TOKEN"        /* 32 hex digits, the secret */
#define GCL_ELASTIC_ENV_JOIN         "GCL_ELASTIC_JOIN"         /* "1": replaces a lost one */
#define GCL_ELASTIC_ENV_MIN_REPLICAS "GCL_ELASTIC_MIN_REPLICAS" /* poprun --min-replicas */

#define GCL_STORE_MAGIC     0x31534c47u /* "GLS1" */
#define GCL_STORE_MAX_BYTES (1u << 20)  /* largest payload of one message */
#define GCL_STORE_TEXT_MAX  400         /* longest text (REFUSE, COLL_FAIL, NEWS, STOP) */

enum {
    GCL_STORE_HELLO = 1,
    GCL_STORE_WELCOME = 2,
    GCL_STORE_REFUSE = 3,
    GCL_STORE_BEAT = 4,
    GCL_STORE_COLL = 5,
    GCL_STORE_COLL_DONE = 6,
    GCL_STORE_COLL_FAIL = 7,
    GCL_STORE_RESIZE = 8,
    GCL_STORE_EPOCH = 9,
    GCL_STORE_STOP = 10,
    GCL_STORE_NEWS = 11,
    GCL_STORE_BYE = 12,
};

/* COLL_DONE flags: instances wait to join (the program may return at this step boundary and
 * resize). */
#define GCL_STORE_F_JOINERS 1u
/* RESIZE flags: this instance's run failed (a resize that changes nothing then stops the job:
 * the failure was the program's own). */
#define GCL_STORE_F_FAILED 2u

typedef struct {
    uint32_t magic;
    uint16_t kind;
    uint16_t flags;
    int32_t epoch;
    int32_t arg;
    uint64_t seq;
    uint32_t bytes;
    uint32_t reserved;
} gcl_store_head_t;

typedef struct {
    uint8_t token[16];
    int32_t pid;
    int32_t join; /* 1: replaces a lost instance of SLOT */
    char host[64];
} gcl_store_hello_t;

/* EPOCH's payload: this, then int32 slots of the members (rank order), of the instances lost
 * since the last epoch and of those that joined. */
typedef struct {
    int32_t members, lost, joined;
    int32_t replicas_per_instance;
} gcl_store_epoch_t;

_Static_assert(sizeof(gcl_store_head_t) == 32, "the head is 32 bytes on the wire");

#endif /* GCL_ELASTIC_STORE_H */
