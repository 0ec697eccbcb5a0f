/*
 * libFuzzer target: the topology-file parser and builder (sim_topology_load, sim/). The input is
 * the file. A file the parser accepts must build a topology whose every route can be asked for;
 * a file it refuses must come with a one-line reason that names the file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "sim/topology/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_memfile(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    sim_topology_t *t = NULL;
    memset(err, 'x', sizeof err);
    int rc = sim_topology_load(path, &t, err, sizeof err);
    close(fd);
    if (rc == 0) {
        int n = sim_topology_num_ipus(t), ilds = sim_topology_num_ilds(t);
        if (!t || n < 1 || n > SIM_TOPOLOGY_MAX_IPUS || ilds < 1 || ilds > n ||
            strlen(sim_topology_name(t)) == 0)
            abort();
        for (int i = 0; i < n; i++)
            if (sim_topology_ild_of(t, i) < 0 || sim_topology_ild_of(t, i) >= ilds)
                abort();
        if (sim_topology_ild_of(t, n) != -1 || sim_topology_ild_of(t, -1) != -1)
            abort();
        sim_topology_free(t);
    } else if (rc > 0 || memchr(err, '\0', sizeof err) == NULL || !strstr(err, path)) {
        abort(); /* a refusal is a negative errno and a sentence naming the file */
    }
    return 0;
}
