/*
 * Simulated SRAM accounting for one IPU. No real memory is allocated: a sim_mem_t only counts
 * what a program says it holds on the IPU, refuses what would not fit, and can say what is
 * allocated when something does not fit.
 *
 * One sim_mem_t per simulated IPU. It is not locked: the IPU's own context (thread) uses it, or
 * the caller serialises access.
 */
#ifndef SIM_MEMORY_H
#define SIM_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* Labels longer than this are truncated in the accounting and the report. */
#define SIM_MEM_LABEL_MAX 48

typedef struct sim_mem sim_mem_t;

/* Creates an accounting of CAPACITY bytes (e.g. sim_device_memory(dev)). Returns 0, -EINVAL
 * when OUT is NULL, or -ENOMEM. */
int sim_mem_create(uint64_t capacity, sim_mem_t **out);

/* Frees the accounting (not the simulated allocations one by one: they simply vanish). */
void sim_mem_destroy(sim_mem_t *m);

/* Accounts BYTES (0 is allowed) under LABEL (copied; NULL means "(unnamed)") and returns a
 * handle in *ID (never 0). Returns 0; -ENOSPC when the IPU's SRAM would overflow, in which case
 * nothing changes and sim_mem_report() says what is there; -ENOMEM when the host is out of
 * memory for the bookkeeping; -EINVAL when M or ID is NULL. */
int sim_mem_alloc(sim_mem_t *m, uint64_t bytes, const char *label, uint64_t *id);

/* Releases the allocation ID. Returns 0, or -ENOENT when ID is not allocated. */
int sim_mem_free(sim_mem_t *m, uint64_t id);

uint64_t sim_mem_capacity(const sim_mem_t *m);
uint64_t sim_mem_used(const sim_mem_t *m);
uint64_t sim_mem_peak(const sim_mem_t *m);
size_t sim_mem_count(const sim_mem_t *m);

/* Writes what is allocated, one line per allocation, largest first (ties: older first):
 *     "  268435456 bytes  weights\n"
 * at most MAX_LINES lines (0: all), then "  ... and N more allocations (B bytes)\n" if any were
 * left out. Returns what snprintf would: the length of the whole text, even when BUF (LEN bytes,
 * may be NULL with LEN 0) was too small and the text was truncated. */
size_t sim_mem_report(const sim_mem_t *m, char *buf, size_t len, size_t max_lines);

#endif /* SIM_MEMORY_H */
