/*
 * mpirun's daemon with SIGTERM blocked; see orted_agent.h.
 */
#include "wrapper/orted_agent.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

int orted_agent_main(int argc, char **argv)
{
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    char **args = xcalloc((size_t)argc + 2, sizeof(char *));
    args[0] = "orted";
    for (int i = 0; i < argc; i++)
        args[i + 1] = argv[i];
    execvp(args[0], args);
    fprintf(stderr, "poprun: cannot run orted (mpirun's daemon): %s\n", strerror(errno));
    free(args);
    return 127;
}
