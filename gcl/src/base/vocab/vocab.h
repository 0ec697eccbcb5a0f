/*
 * GCL's vocabulary in libgcl: method names where algorithms are named, and GCL_OPTIONS' JSON.
 */
#ifndef GCL_VOCAB_H
#define GCL_VOCAB_H

#include <stddef.h>

#include "coll/types.h"

/* Our registry's name for algorithm NAME of collective C, in any case: the name itself, GCL's
 * method name's counterpart (quad_directional_ring, or a ring method of reduce_scatter and
 * all_gather), or "auto". NULL when it names none. */
const char *gcl_algo_resolve(coll_collective_t c, const char *name);

/* Called for each key of the object with its value as text (strings unquoted). Returns 0, or -1
 * with a sentence in WHY. */
typedef int (*gcl_option_fn)(void *ctx, const char *key, const char *value, char *why, size_t wlen);

/* Reads TEXT, one flat JSON object ({"method": "clockwise_ring", "maxBytesPerTile": 1024}), and
 * calls FN for each key in order. Returns 0, or -1 with a sentence in WHY. */
int gcl_options_json(const char *text, gcl_option_fn fn, void *ctx, char *why, size_t wlen);

#endif /* GCL_VOCAB_H */
