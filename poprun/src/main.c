/*
 * poprun: launches a job of instances through mpirun (see README.md). The parts live in the
 * poprun_core library; this file only dispatches.
 */
#include <stdio.h>
#include <string.h>

#include "cli/options.h"
#include "common/hidden.h"
#include "launcher/job.h"
#include "wrapper/instance.h"
#include "wrapper/orted_agent.h"

#ifndef POPRUN_VERSION
#define POPRUN_VERSION "unknown"
#endif

/* --version, as text or (--version-format json) as one JSON object. */
static void print_version(int json)
{
    if (json)
        printf("{\"name\": \"poprun\", \"version\": \"%s\", \"launcher\": \"OpenMPI mpirun\", "
               "\"ipus\": \"simulated\"}\n",
               POPRUN_VERSION);
    else
        printf("poprun %s (OpenMPI mpirun launcher of the gcl runtime)\n", POPRUN_VERSION);
}

int main(int argc, char **argv)
{
    struct poprun_options o;
    char err[1024];
    int status;
    if (argc >= 2 && strcmp(argv[1], POPRUN_OPT_ORTED) == 0)
        return orted_agent_main(argc - 2, argv + 2);
    options_init(&o);
    if (options_parse(&o, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "poprun: %s\n", err);
        status = 2;
    } else if (o.instance_token) {
        status = instance_main(&o);
    } else if (o.help_markdown) {
        options_print_markdown(stdout);
        status = 0;
    } else if (o.help) {
        options_print_help(stdout);
        status = 0;
    } else if (o.version) {
        print_version(o.version_format && strcmp(o.version_format, "json") == 0);
        status = 0;
    } else {
        status = job_main(&o);
    }
    options_free(&o);
    return status;
}
