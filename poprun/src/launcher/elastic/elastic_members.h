/*
 * The membership of an elastic job (poprun --elastic): the state machine behind poprun's store
 * (gcl/elastic_store.h describes the protocol). Pure: it sees messages, closed connections and
 * the clock, and answers through the callbacks it was given; elastic_server.c owns the sockets.
 *
 * Slots are the instances as poprun planned them (0 .. N-1). An epoch is a membership: its
 * members, in rank order (ascending slot). Epoch 0 forms once every slot has said HELLO. Then:
 *   - a member whose connection closes without BYE, that is silent for BEAT_TIMEOUT_S, or
 *     whose end poprun learns otherwise (em_lost) is lost: every other member hears it (NEWS),
 *     the bootstrap call in flight fails (COLL_FAIL), now and for late arrivals;
 *   - a member that asks to resize (RESIZE) waits until every member of its epoch has asked or
 *     is lost; members that have not asked RESIZE_TIMEOUT_S after the first did are evicted
 *     (lost, their connection closed). Then the next epoch forms: the members that asked and the
 *     instances waiting to join, or STOP for all when they hold fewer than MIN_REPLICAS replicas
 *     (or when nothing changed: the run failed for a cause of its own);
 *   - an instance that says HELLO with join for a lost slot waits; every COLL_DONE carries
 *     GCL_STORE_F_JOINERS meanwhile, so that the members can resize at a step boundary. It is
 *     taken in by a resize that no member asked for after a failed run (GCL_STORE_F_FAILED):
 *     after a loss the survivors go on first, and take replacements in at the next boundary;
 *   - when every member has said BYE the job is complete; a joiner still waiting gets STOP.
 * A fault during a resize is one more loss: an instance lost before the epoch forms is left out;
 * one lost after fails the new epoch's first bootstrap call, and the survivors resize again.
 */
#ifndef POPRUN_ELASTIC_MEMBERS_H
#define POPRUN_ELASTIC_MEMBERS_H

#include <gcl/elastic_store.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct emembers;

/* Where the state machine's answers go: a message to connection CONN, a connection to close, a
 * line for poprun's stderr (without "poprun: "). */
struct emembers_io {
    void (*send)(void *ctx, int conn, const gcl_store_head_t *h, const void *payload);
    void (*drop)(void *ctx, int conn);
    void (*say)(void *ctx, const char *line);
    void *ctx;
};

struct emembers_cfg {
    int slots;          /* instances planned */
    int local_replicas; /* replicas per instance */
    int min_replicas;   /* --min-replicas */
    double beat_timeout_s, resize_timeout_s;
    uint8_t token[16];
};

/* What happened at one change of membership, for the report. */
#define EM_LIST_MAX 64
struct em_event {
    int epoch;
    double t;       /* the clock when it formed */
    double first_t; /* when the first loss or join of it was known */
    int members;    /* instances in it */
    int nlost, njoined;
    int lost[EM_LIST_MAX], joined[EM_LIST_MAX]; /* slots (the first EM_LIST_MAX) */
};

struct emembers *em_create(const struct emembers_cfg *cfg, const struct emembers_io *io);
void em_free(struct emembers *em);

/* A whole message H (and its payload) from connection CONN at time NOW. */
void em_message(struct emembers *em, int conn, const gcl_store_head_t *h, const void *payload,
                double now);
/* Connection CONN closed (or broke) at NOW. */
void em_closed(struct emembers *em, int conn, double now);
/* The job's first instance of SLOT ended (poprun read its wrapper's status in the job's
 * mpirun), WHY; nothing when a replacement holds SLOT now. */
void em_lost(struct emembers *em, int slot, const char *why, double now);
/* Deadlines: silent instances and resizes that wait too long. */
void em_tick(struct emembers *em, double now);
/* When em_tick has something to do next (0: nothing pending). */
double em_next_deadline(const struct emembers *em);

/* The end: whether every member of the last epoch said BYE; whether the job was stopped (and
 * why, into WHY); the current epoch and its member count; the changes so far. */
bool em_completed(const struct emembers *em);
bool em_stopped(const struct emembers *em, char *why, size_t len);
int em_epoch(const struct emembers *em);
int em_members(const struct emembers *em);
const struct em_event *em_events(const struct emembers *em, int *n);
/* Whether an instance of SLOT was lost at some point (the failure of the job's first instance
 * of SLOT is then part of the elastic story, not the job's); why (the last time) into WHY. */
bool em_slot_lost(const struct emembers *em, int slot, char *why, size_t len);
/* Whether SLOT is waiting to join (a replacement), or has joined and is a member. */
bool em_slot_member(const struct emembers *em, int slot);
/* How many times an instance of SLOT was lost (the job's first, or a replacement, before or after
 * it joined): a replacement started when it was N is the slot's holder while it stays N. */
int em_slot_losses(const struct emembers *em, int slot);
/* The job stops (poprun was interrupted, or its instances were stopped from outside): no slot
 * is vacant any more, and the instances that end from now on end with the stop (the store's
 * answers go on as before; its lines to poprun's stderr stop). */
void em_hold(struct emembers *em);
/* Slots lost and not yet replaced, lowest first: how many, into OUT (up to MAX); none once
 * held. */
int em_vacant(const struct emembers *em, int *out, int max);

#endif /* POPRUN_ELASTIC_MEMBERS_H */
