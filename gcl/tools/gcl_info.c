/*
 * gcl-info: what libgcl can be told and what it can do.
 *
 *   gcl-info              every GCL_* environment variable: default, current value, meaning
 *   gcl-info --algorithms every algorithm of every collective
 */
#include <stdio.h>
#include <string.h>

#include "coll/algo.h"
#include "base/param.h"

static void print_algorithms(void)
{
    for (int c = 0; c < COLL_COLLECTIVE_COUNT; c++) {
        size_t n;
        const coll_algo_t *const *list = coll_algo_list((coll_collective_t)c, &n);
        printf("%s:\n", coll_collective_name((coll_collective_t)c));
        if (n == 0)
            printf("  (none)\n");
        for (size_t i = 0; i < n; i++)
            printf("  %-24s %s\n", list[i]->name, list[i]->description);
    }
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--algorithms") == 0) {
        print_algorithms();
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: gcl-info [--algorithms | --markdown]\n"
               "  Lists libgcl's environment variables (with their values in this\n"
               "  environment), as a Markdown table with --markdown, or with --algorithms\n"
               "  the algorithms of every collective.\n");
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--markdown") == 0) {
        gcl_params_print(stdout, 1);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "gcl-info: unknown argument '%s' (try --help)\n", argv[1]);
        return 2;
    }
    gcl_params_print(stdout, 0);
    return 0;
}
