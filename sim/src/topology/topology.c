/*
 * Topologies, the front (sim/topology/topology.h): a preset, a topology file, or either with overrides,
 * built into the container of sim/topology/topology_graph.h.
 */
#include "sim/topology/topology.h"

#include <errno.h>
#include <string.h>

#include "base/text.h"
#include "topology/topology_build.h"
#include "topology/topology_parse.h"
#include "topology/topology_spec.h"

int sim_topology_preset(const char *name, sim_topology_t **out, char *err, size_t errlen)
{
    struct sim_topo_spec s;
    int rc = sim_topo_preset_spec(name, &s, err, errlen);

    *out = NULL;
    return rc != 0 ? rc : sim_topo_build(&s, out, err, errlen);
}

int sim_topology_open(const char *spec, sim_topology_t **out, char *err, size_t errlen)
{
    int rc;

    *out = NULL;
    if (spec == NULL || spec[0] == '\0') {
        sim_errf(err, errlen, "empty topology: give a preset name or a topology file");
        return -EINVAL;
    }
    if (strchr(spec, ',') != NULL)
        return sim_topo_parse_overrides(spec, out, err, errlen);
    if (sim_topo_is_preset(spec))
        return sim_topology_preset(spec, out, err, errlen);
    rc = sim_topo_parse_file(spec, out, err, errlen);
    if (rc == -ENOENT)
        sim_errf(err, errlen,
                 "unknown topology '%s': not a preset (M2000, POD16, POD64, POD128, POD256) "
                 "and no such file",
                 spec);
    return rc;
}

int sim_topology_load(const char *path, sim_topology_t **out, char *err, size_t errlen)
{
    return sim_topo_parse_file(path, out, err, errlen);
}

const char *sim_topology_smallest_preset(int num_ipus)
{
    return sim_topo_smallest_preset(num_ipus);
}
