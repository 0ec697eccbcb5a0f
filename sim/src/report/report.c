/*
 * The JSON report and the Chrome trace writers.
 *
 * Both print only integers and exact decimal microseconds (sim_time_format_us), never floating
 * point, so the same run writes byte-identical files. Errors of the stream are checked once at
 * the end (ferror), which catches a full disk as well as a closed pipe.
 */
#include "sim/report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/text.h"

/* Writes S as a JSON string literal. Bytes >= 0x80 pass through (UTF-8 stays UTF-8). */
static void put_json_string(FILE *f, const char *s)
{
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\u%04x", *p);
        else
            putc(*p, f);
    }
    putc('"', f);
}

static void put_us(FILE *f, sim_time_t t)
{
    char buf[32];

    sim_time_format_us(t, buf, sizeof(buf));
    fputs(buf, f);
}

static const sim_device_t *device_of(const sim_report_info_t *info)
{
    return info->device ? info->device : sim_device_gc200();
}

static void put_header(FILE *f, const sim_report_info_t *info, const char *indent)
{
    const sim_device_t *d = device_of(info);

    fprintf(f, "%s\"topology\": ", indent);
    put_json_string(f, info->topology ? info->topology : "unknown");
    fprintf(f, ",\n%s\"device\": ", indent);
    put_json_string(f, d->name);
    fprintf(f, ",\n%s\"clock_hz\": %" PRIu64 ",\n%s\"instance\": %d,\n", indent, d->clock_hz,
            indent, info->instance);
    if (info->num_instances > 0)
        fprintf(f, "%s\"num_instances\": %d,\n", indent, info->num_instances);
    if (info->program != NULL) {
        fprintf(f, "%s\"program\": ", indent);
        put_json_string(f, info->program);
        fputs(",\n", f);
    }
}

static void put_ipu(FILE *f, const sim_device_t *d, const sim_report_ipu_t *r)
{
    const sim_ipu_stats_t *s = r->stats;

    fprintf(f, "    {\"ipu\": %d", r->ipu);
    for (int a = 0; a < SIM_ACT_COUNT; a++)
        fprintf(f, ", \"%s_cycles\": %" PRIu64, sim_activity_name((sim_activity_t)a),
                sim_device_cycles(d, s->time[a]));
    fprintf(f, ", \"total_cycles\": %" PRIu64 ", \"time_us\": ", sim_device_cycles(d, s->clock));
    put_us(f, s->clock);
    fprintf(f, ", \"peak_memory_bytes\": %" PRIu64, r->peak_memory);
    if (r->memory_capacity > 0)
        fprintf(f, ", \"memory_capacity_bytes\": %" PRIu64, r->memory_capacity);
    if (r->trace != NULL)
        fprintf(f, ", \"trace_slices\": %zu, \"trace_dropped\": %zu", sim_trace_count(r->trace),
                sim_trace_dropped(r->trace));
    fputs("}", f);
}

static void put_totals(FILE *f, const sim_device_t *d, const sim_report_ipu_t *ipus, size_t n)
{
    sim_time_t sum[SIM_ACT_COUNT] = {0}, makespan = 0;
    uint64_t peak = 0;

    for (size_t i = 0; i < n; i++) {
        for (int a = 0; a < SIM_ACT_COUNT; a++)
            sum[a] = sim_time_add(sum[a], ipus[i].stats->time[a]);
        makespan = sim_time_max(makespan, ipus[i].stats->clock);
        if (ipus[i].peak_memory > peak)
            peak = ipus[i].peak_memory;
    }
    fprintf(f, "  \"totals\": {\"ipus\": %zu", n);
    for (int a = 0; a < SIM_ACT_COUNT; a++)
        fprintf(f, ", \"%s_cycles\": %" PRIu64, sim_activity_name((sim_activity_t)a),
                sim_device_cycles(d, sum[a]));
    fprintf(f, ", \"max_total_cycles\": %" PRIu64 ", \"max_time_us\": ",
            sim_device_cycles(d, makespan));
    put_us(f, makespan);
    fprintf(f, ", \"max_peak_memory_bytes\": %" PRIu64 "}\n", peak);
}

static int check_args(FILE *f, const sim_report_info_t *info, const sim_report_ipu_t *ipus,
                      size_t n)
{
    if (f == NULL || info == NULL || (n > 0 && ipus == NULL))
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        if (ipus[i].stats == NULL)
            return -EINVAL;
    return 0;
}

int sim_report_write_json(FILE *f, const sim_report_info_t *info, const sim_report_ipu_t *ipus,
                          size_t n)
{
    const sim_device_t *d;

    if (check_args(f, info, ipus, n) != 0)
        return -EINVAL;
    d = device_of(info);
    fputs("{\n  \"format\": \"gcl-sim-report/1\",\n", f);
    put_header(f, info, "  ");
    fputs("  \"ipus\": [\n", f);
    for (size_t i = 0; i < n; i++) {
        put_ipu(f, d, &ipus[i]);
        fputs(i + 1 < n ? ",\n" : "\n", f);
    }
    fputs("  ],\n", f);
    put_totals(f, d, ipus, n);
    fputs("}\n", f);
    return ferror(f) ? -EIO : 0;
}

/* Metadata events: name the instance's process and each IPU's thread, in IPU order. */
static void put_trace_names(FILE *f, const sim_report_info_t *info, const sim_report_ipu_t *ipus,
                            size_t n)
{
    char name[96];

    snprintf(name, sizeof(name), "instance %d (%s)", info->instance,
             info->topology ? info->topology : "unknown");
    fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":",
            info->instance);
    put_json_string(f, name);
    fputs("}}", f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f,
                ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"name\":\"IPU %d\"}}",
                info->instance, ipus[i].ipu, ipus[i].ipu);
        fprintf(f,
                ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"sort_index\":%d}}",
                info->instance, ipus[i].ipu, ipus[i].ipu);
    }
}

static void put_slice(FILE *f, int pid, int tid, const struct sim_trace_slice *s)
{
    fputs(",\n{\"name\":", f);
    put_json_string(f, s->name);
    fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":",
            sim_activity_name(s->activity), pid, tid);
    put_us(f, s->start);
    fputs(",\"dur\":", f);
    put_us(f, s->dur);
    if (s->bytes > 0)
        fprintf(f, ",\"args\":{\"bytes\":%" PRIu64 "}", s->bytes);
    fputs("}", f);
}

/* The slices of one IPU, and an instant event at its clock when some were dropped. */
static size_t put_ipu_slices(FILE *f, int pid, const sim_report_ipu_t *r)
{
    struct sim_trace_slice s;
    size_t dropped;

    if (r->trace == NULL)
        return 0;
    for (size_t i = 0; i < sim_trace_count(r->trace); i++) {
        sim_trace_get(r->trace, i, &s);
        put_slice(f, pid, r->ipu, &s);
    }
    dropped = sim_trace_dropped(r->trace);
    if (dropped > 0) {
        fprintf(f,
                ",\n{\"name\":\"trace truncated: %zu slices dropped\",\"ph\":\"i\",\"s\":\"t\","
                "\"pid\":%d,\"tid\":%d,\"ts\":",
                dropped, pid, r->ipu);
        put_us(f, r->stats->clock);
        fputs("}", f);
    }
    return dropped;
}

int sim_trace_write_json(FILE *f, const sim_report_info_t *info, const sim_report_ipu_t *ipus,
                         size_t n)
{
    size_t dropped = 0;

    if (check_args(f, info, ipus, n) != 0)
        return -EINVAL;
    fputs("{\"traceEvents\":[\n", f);
    put_trace_names(f, info, ipus, n);
    for (size_t i = 0; i < n; i++)
        dropped += put_ipu_slices(f, info->instance, &ipus[i]);
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\n", f);
    put_header(f, info, "  ");
    fprintf(f, "  \"time_unit\": \"simulated microseconds\",\n  \"dropped_slices\": %zu\n}}\n",
            dropped);
    return ferror(f) ? -EIO : 0;
}

typedef int (*writer_fn)(FILE *, const sim_report_info_t *, const sim_report_ipu_t *, size_t);

static int write_path(writer_fn fn, const char *path, const sim_report_info_t *info,
                      const sim_report_ipu_t *ipus, size_t n)
{
    FILE *f;
    int rc;

    if (path == NULL)
        return -EINVAL;
    f = fopen(path, "w");
    if (f == NULL)
        return -errno;
    rc = fn(f, info, ipus, n);
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    return rc;
}

int sim_report_write_json_path(const char *path, const sim_report_info_t *info,
                               const sim_report_ipu_t *ipus, size_t n)
{
    return write_path(sim_report_write_json, path, info, ipus, n);
}

int sim_trace_write_json_path(const char *path, const sim_report_info_t *info,
                              const sim_report_ipu_t *ipus, size_t n)
{
    return write_path(sim_trace_write_json, path, info, ipus, n);
}

int sim_report_expand_path(const char *pattern, int instance, char *out, size_t len)
{
    size_t pos = 0;

    if (pattern == NULL || out == NULL || len == 0)
        return -EINVAL;
    for (const char *p = pattern; *p; p++) {
        char num[16];
        const char *piece = num;

        if (*p != '%') {
            num[0] = *p;
            num[1] = '\0';
        } else if (p[1] == 'i') {
            snprintf(num, sizeof(num), "%d", instance);
            p++;
        } else if (p[1] == '%') {
            piece = "%";
            p++;
        } else {
            return -EINVAL;
        }
        if (pos + strlen(piece) >= len)
            return -ENAMETOOLONG;
        memcpy(out + pos, piece, strlen(piece));
        pos += strlen(piece);
    }
    out[pos] = '\0';
    return 0;
}
