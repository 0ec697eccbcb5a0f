/* Pipeline schedules; see pipe.h. */
#include "pipeline/pipe.h"

#include <string.h>

const char *pipe_schedule_name(pipe_schedule_t s)
{
    return s == PIPE_GPIPE ? "gpipe" : "1f1b";
}

int pipe_schedule_parse(const char *text, pipe_schedule_t *out)
{
    if (!strcmp(text, "gpipe"))
        *out = PIPE_GPIPE;
    else if (!strcmp(text, "1f1b"))
        *out = PIPE_1F1B;
    else
        return -1;
    return 0;
}

void pipe_schedule(pipe_schedule_t s, int stage, int nstages, int nmicro, pipe_op_t *ops)
{
    int n = 0, f = 0, b = 0;
    int warmup = s == PIPE_GPIPE ? nmicro : nstages - stage - 1;
    if (warmup > nmicro)
        warmup = nmicro;
    while (f < warmup)
        ops[n++] = (pipe_op_t){'F', f++};
    while (f < nmicro) { /* steady state: one forward, one backward */
        ops[n++] = (pipe_op_t){'F', f++};
        ops[n++] = (pipe_op_t){'B', b++};
    }
    while (b < nmicro)
        ops[n++] = (pipe_op_t){'B', b++};
}

int pipe_slots(pipe_schedule_t s, int stage, int nstages, int nmicro)
{
    int held = s == PIPE_GPIPE ? nmicro : nstages - stage;
    return held < nmicro ? held : nmicro;
}
