/*
 * The message engine: runs one rank's schedule (collectives/) over the transports, step by
 * step, as a state machine (start, then progress until done), so that blocking calls and
 * non-blocking requests share it.
 */
#ifndef GCL_MESSAGES_H
#define GCL_MESSAGES_H

#include "engine/exec.h"

extern const gcl_engine_t gcl_engine_messages;

#endif /* GCL_MESSAGES_H */
