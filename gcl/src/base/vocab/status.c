/* Status strings, generated from the one table in gcl/status.h. Declared in gcl/status.h. */
#include "gcl/status.h"

const char *gcl_status_string(gcl_status_t status)
{
    switch (status) {
#define GCL_STATUS_TEXT(name, value, text)                                                         \
    case name:                                                                                     \
        return text;
        GCL_STATUS_MAP(GCL_STATUS_TEXT)
#undef GCL_STATUS_TEXT
    }
    return "unknown status";
}

const char *gcl_status_name(gcl_status_t status)
{
    switch (status) {
#define GCL_STATUS_NAME(name, value, text)                                                         \
    case name:                                                                                     \
        return #name;
        GCL_STATUS_MAP(GCL_STATUS_NAME)
#undef GCL_STATUS_NAME
    }
    return "GCL_ERR_UNKNOWN";
}
