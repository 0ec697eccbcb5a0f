/*
 * The output of the nccl-tests tools, line for line as nccl-tests prints it (src/common.cu and
 * src/util.cu of NVIDIA's nccl-tests), so that the scripts that read it work unchanged:
 *
 *   # Collective test starting: all_reduce_perf
 *   # nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 4(factor) warmup iters: 5 ...
 *   #
 *   # Using devices
 *   #  Rank  0 Group  0 Pid  12345 on      host1 device  0 [0000:00:00] GC200 IPU (simulated)
 *   #
 *   #                                                              out-of-place    in-place
 *   #       size         count      type   redop    root     time   algbw   busbw  #wrong ...
 *   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)         ...
 *              8             2     float     sum      -1    12.34    0.00    0.00       0 ...
 *   # Out of bounds values : 0 OK
 *   # Avg bus bandwidth    : 0.123
 *
 * With -J FILE, the same results as nccl-tests' JSON (version 1): args, a few variables, config,
 * devices, results (out_of_place / in_place each with time, alg_bw, bus_bw, nwrong), the footer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nccl.h"

extern char **environ;

/* VALUE in WIDTH columns with as many decimals as fit (2, 1, 0), else in e-notation. */
static void fit(char *out, size_t len, double value, int width)
{
    int digits = 0;
    for (double v = 1; value >= v && digits < 40; v *= 10)
        digits++;
    if (digits < width - 2)
        snprintf(out, len, "%*.2f", width, value);
    else if (digits < width - 1)
        snprintf(out, len, "%*.1f", width, value);
    else if (digits < width + 1)
        snprintf(out, len, "%*.0f", width, value);
    else
        snprintf(out, len, "%*.0e", width, value);
}

/* A JSON string of TEXT (printable ASCII; anything else becomes '?'). */
static void json_str(FILE *f, const char *text)
{
    fputc('"', f);
    for (; *text; text++) {
        unsigned char c = (unsigned char)*text;
        if (c == '"' || c == '\\' || c == '/')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else
            fputc(c < 0x20 || c >= 0x7f ? '?' : c, f);
    }
    fputc('"', f);
}

static void json_now(FILE *f)
{
    char buf[64];
    time_t now = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", localtime(&now));
    json_str(f, buf);
}

/* Opens -J FILE as nccl-tests does: never over an existing file, but FILE.0, FILE.1, ... */
static FILE *open_json(const char *path)
{
    char try[4096];
    snprintf(try, sizeof try, "%s", path);
    for (int k = 0; k < 1000; k++) {
        FILE *f = fopen(try, "wx");
        if (f) {
            printf("# Writing JSON output to %s\n", try);
            return f;
        }
        if (errno != EEXIST)
            break;
        snprintf(try, sizeof try, "%s.%d", path, k);
    }
    printf("# skipping json output; %s not accessible\n", try);
    return NULL;
}

static void json_head(nccl_job_t *job)
{
    FILE *f = job->json;
    fputs("{\"version\":1,\"start_time\":", f);
    json_now(f);
    fputs(",\"args\":[", f);
    for (int i = 0; i < job->argc; i++) {
        fputs(i ? "," : "", f);
        json_str(f, job->argv[i]);
    }
    /* The variables that change what is measured, not the whole environment. */
    fputs("],\"env\":[", f);
    int first = 1;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "GCL_", 4) && strncmp(*e, "POPDIST_", 8) && strncmp(*e, "NCCL_TESTS_", 11))
            continue;
        fputs(first ? "" : ",", f);
        json_str(f, *e);
        first = 0;
    }
    fprintf(f, "],\"gcl_version\":%d", gcl_version());
}

void nccl_report_header(nccl_job_t *job)
{
    const nccl_opts_t *o = job->o;
    if (o->json)
        job->json = open_json(o->json);
    if (job->json)
        json_head(job);
    printf("# nccl-tests (gcl) version %s gcl-headers=%d gcl-library=%d\n", gcl_version_string(),
           GCL_VERSION_CODE, gcl_version());
    printf("# Collective test starting: %s\n", job->tool->name);
    printf("# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d "
           "iters: %d agg iters: %d validation: %d graph: %d\n",
           o->nthreads, job->info.num_local_replicas / o->nthreads, o->min_bytes, o->max_bytes,
           o->step_factor > 1 ? o->step_factor : o->step_bytes,
           o->step_factor > 1 ? "factor" : "bytes", o->warmup, o->iters, o->agg, o->check, 0);
    if (o->blocking)
        printf("# Blocking Enabled: wait for completion and barrier after each collective \n");
    printf("#\n");
    if (!job->json)
        return;
    FILE *f = job->json;
    fprintf(f,
            ",\"config\":{\"nthreads\":%d,\"ngpus\":%d,\"minimum_bytes\":%zu,"
            "\"maximum_bytes\":%zu,",
            o->nthreads, job->info.num_local_replicas / o->nthreads, o->min_bytes, o->max_bytes);
    if (o->step_factor > 1)
        fprintf(f, "\"step_factor\":%zu,", o->step_factor);
    else
        fprintf(f, "\"step_bytes\":%zu,", o->step_bytes);
    fprintf(f,
            "\"warmup_iters\":%d,\"iterations\":%d,\"aggregated_iterations\":%d,"
            "\"validation\":%d,\"graph\":0,\"blocking_collectives\":\"%s\","
            "\"parallel_init\":\"false\"",
            o->warmup, o->iters, o->agg, o->check, o->blocking ? "true" : "false");
    job->json_open = 1;
}

void nccl_report_ranks(nccl_job_t *job, char *const *lines, int n)
{
    printf("# Using devices\n");
    for (int q = 0; q < n; q++)
        printf("%s\n", lines[q]);
    if (!job->json)
        return;
    FILE *f = job->json;
    fputs(",\"devices\":[", f);
    for (int q = 0; q < n; q++) {
        int rank = 0, group = 0, pid = 0, device = 0;
        char host[256] = "", hex[128] = "", info[256] = "";
        sscanf(lines[q], "#  Rank %d Group %d Pid %d on %255s device %d [%127[^]]] %255[^\n]",
               &rank, &group, &pid, host, &device, hex, info);
        fprintf(f, "%s{\"rank\":%d,\"group\":%d,\"pid\":%d,\"hostname\":", q ? "," : "", rank,
                group, pid);
        json_str(f, host);
        fprintf(f, ",\"device\":%d,\"device_hex\":", device);
        json_str(f, hex);
        fputs(",\"device_info\":", f);
        json_str(f, info);
        fputc('}', f);
    }
    fputs("]}", f);
    job->json_open = 2;
}

void nccl_report_table_header(nccl_job_t *job)
{
    printf("#\n");
    printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place    "
           "      \n",
           "", "", "", "", "");
    printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size",
           "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
           "busbw", "#wrong", 0, "");
    printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
           "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
           0, "");
    fflush(stdout);
    if (job->json)
        fputs(",\"results\":[", job->json);
    job->json_open = 3;
}

void nccl_report_row_start(nccl_job_t *job, const nccl_row_t *r)
{
    char root[16];
    snprintf(root, sizeof root, "%6i", r->root);
    printf("%12zu  %12zu  %8s  %6s  %6s", r->bytes, r->count, r->type, r->op, root);
    job->row_open = 1;
    if (!job->json)
        return;
    FILE *f = job->json;
    fprintf(f, "%s{\"size\":%zu,\"count\":%zu,\"type\":", job->json_rows++ ? "," : "", r->bytes,
            r->count);
    json_str(f, r->type);
    fputs(",\"redop\":", f);
    json_str(f, r->op);
    fputs(",\"root\":", f);
    json_str(f, root);
    job->json_open = 4;
}

void nccl_report_row_half(nccl_job_t *job, const nccl_row_t *r)
{
    char t[32], a[32], b[32];
    fit(t, sizeof t, r->time_us, 7);
    fit(a, sizeof a, r->algbw, 6);
    fit(b, sizeof b, r->busbw, 6);
    if (r->wrong >= 0)
        printf("  %7s  %6s  %6s  %6g", t, a, b, (double)r->wrong);
    else
        printf("  %7s  %6s  %6s    N/A", t, a, b);
    job->errors += r->wrong > 0;
    job->bw_sum += r->busbw;
    job->bw_count++;
    if (!job->json)
        return;
    fprintf(job->json, ",\"%s\":{\"time\":%f,\"alg_bw\":%f,\"bus_bw\":%f,\"nwrong\":",
            r->in_place ? "in_place" : "out_of_place", r->time_us, r->algbw, r->busbw);
    if (r->wrong >= 0)
        fprintf(job->json, "%f}", (double)r->wrong);
    else
        fputs("null}", job->json);
}

void nccl_report_row_end(nccl_job_t *job)
{
    printf("\n");
    job->row_open = 0;
    fflush(stdout);
    if (!job->json)
        return;
    fprintf(job->json, ",\"actual_iterations\":%d,\"experiment_name\":", job->o->iters);
    json_str(job->json, job->tool->name);
    fputc('}', job->json);
    job->json_open = 3;
}

int nccl_report_footer(nccl_job_t *job)
{
    const char *env = getenv("NCCL_TESTS_MIN_BW");
    double min_bw = env ? atof(env) : -1, bw = job->bw_count ? job->bw_sum / job->bw_count : 0;
    int bw_failed = min_bw != -1 && bw < min_bw * 0.9;
    int errors = job->errors + job->other_errors; /* every IPU's rows, printed or not */
    printf("# %-20s : %d %s\n", "Out of bounds values", errors, errors ? "FAILED" : "OK");
    printf("# %-20s : %g %s\n", "Avg bus bandwidth", bw,
           min_bw == -1 ? ""
           : bw_failed  ? "FAILED"
                        : "OK");
    printf("#\n");
    printf("# Collective test concluded: %s\n", job->tool->name);
    printf("\n"); /* nccl-tests prints ncclGetLastError(NULL) here: empty after a good run */
    fflush(stdout);
    if (job->json) {
        FILE *f = job->json;
        fprintf(f, "],\"out_of_bounds\":{\"count\":%d,\"okay\":\"%s\"},", errors,
                errors ? "false" : "true");
        fprintf(f, "\"average_bus_bandwidth\":{\"bandwidth\":%f,\"okay\":", bw);
        json_str(f, min_bw == -1 ? "unchecked" : bw_failed ? "false" : "true");
        fputs("},\"errors\":[],\"end_time\":", f);
        json_now(f);
        fputs("}\n", f);
        fclose(f);
        job->json = NULL;
    }
    return errors || bw_failed ? 1 : 0;
}

int nccl_report_failure(nccl_job_t *job, const char *detail)
{
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    char *dot = strchr(host, '.'); /* nccl-tests' getHostName: the name up to the first dot */
    if (dot)
        *dot = '\0';
    const char *file = job->fail_file ? job->fail_file : "main.c";
    if (job->row_open) /* the row in flight stays cut short, on a line of its own */
        printf("\n");
    printf("%s: Test NCCL failure %s:%d '%s / %s'\n", host, file, job->fail_line,
           gcl_status_string(job->failed ? job->fail_status : GCL_ERR_INTERNAL),
           detail && *detail ? detail : "");
    printf(" .. %s pid %d: Test failure %s:%d\n", host, (int)getpid(), file, job->fail_line);
    fflush(stdout);
    if (job->json) { /* the results so far, the error, and no verdict */
        FILE *f = job->json;
        static const char *const close[] = {"", "}", "", "]", "}]"};
        fputs(close[job->json_open], f);
        fputs(",\"errors\":[", f);
        json_str(f, detail ? detail : "");
        fputs("],\"end_time\":", f);
        json_now(f);
        fputs("}\n", f);
        fclose(f);
        job->json = NULL;
    }
    return 3;
}
