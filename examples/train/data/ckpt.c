/* Checkpoint files; see ckpt.h. */
#include "data/ckpt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoint files are written little-endian straight from memory"
#endif

static const char ckpt_magic[8] = {'G', 'C', 'L', 'T', 'R', 'A', 'I', 'N'};
static ckpt_fault_t ckpt_fault;

void ckpt_set_fault(ckpt_fault_t fault)
{
    ckpt_fault = fault;
}

/* A cursor over the header bytes. */
typedef struct {
    uint8_t *p;
    size_t at;
} cursor_t;

static void put(cursor_t *c, const void *v, size_t n)
{
    memcpy(c->p + c->at, v, n);
    c->at += n;
}

/* Copies N bytes between the cursor and V: into the header when WRITE, out of it otherwise. */
static void io_field(cursor_t *c, void *v, size_t n, int write)
{
    if (write)
        memcpy(c->p + c->at, v, n);
    else
        memcpy(v, c->p + c->at, n);
    c->at += n;
}

#define io(c, v, n) io_field(c, v, n, write)

/* The header fields in file order; WRITE puts them, otherwise gets them. */
static void header_fields(cursor_t *c, ckpt_meta_t *m, int write)
{
    io(c, &m->step, 8);
    io(c, &m->nparams, 8);
    io(c, &m->nstate, 4);
    io(c, &m->nlayers, 4);
    io(c, m->dims, sizeof m->dims);
    io(c, &m->optimizer, 4);
    io(c, &m->lr_schedule, 4);
    io(c, &m->grad_dtype, 4);
    double *d[] = {&m->lr,  &m->momentum,     &m->beta1,     &m->beta2,
                   &m->eps, &m->weight_decay, &m->grad_scale};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        io(c, d[i], 8);
    uint64_t *u[] = {&m->warmup_steps, &m->seed, &m->global_batch, &m->schedule_steps,
                     &m->train_samples};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        io(c, u[i], 8);
    uint32_t *w[] = {&m->replicas, &m->stages, &m->micro_batch, &m->accumulation,
                     &m->in_c,     &m->in_h,   &m->in_w,        &m->augment};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
        io(c, w[i], 4);
    io(c, m->kind, sizeof m->kind);
    io(c, m->kernel, sizeof m->kernel);
    io(c, m->stride, sizeof m->stride);
    io(c, m->pad, sizeof m->pad);
}

#undef io

uint64_t ckpt_file_bytes(const ckpt_meta_t *m)
{
    return CKPT_HEADER_BYTES + (1 + (uint64_t)m->nstate) * m->nparams * 4 + 4;
}

void ckpt_path(const char *dir, uint64_t step, char *buf, size_t len)
{
    snprintf(buf, len, "%s/ckpt-%010llu.gclt", dir, (unsigned long long)step);
}

static int write_all(int fd, const void *buf, size_t len, uLong *crc)
{
    const char *p = buf;
    *crc = crc32_z(*crc, buf, len);
    while (len > 0) {
        ssize_t n = write(fd, p, len > (1u << 30) ? (1u << 30) : len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Header, data and CRC into FD. */
static int write_body(int fd, const ckpt_meta_t *meta, const float *data)
{
    uint8_t header[CKPT_HEADER_BYTES] = {0};
    cursor_t c = {header, 0};
    uint32_t version = CKPT_VERSION, hbytes = CKPT_HEADER_BYTES;
    put(&c, ckpt_magic, 8);
    put(&c, &version, 4);
    put(&c, &hbytes, 4);
    ckpt_meta_t m = *meta;
    header_fields(&c, &m, 1);
    uLong crc = crc32(0, NULL, 0);
    size_t bytes = (1 + (size_t)meta->nstate) * meta->nparams * sizeof(float);
    if (write_all(fd, header, sizeof header, &crc) || write_all(fd, data, bytes / 2, &crc))
        return -1;
    if (ckpt_fault == CKPT_FAULT_MID_WRITE)
        raise(SIGKILL);
    if (write_all(fd, (const char *)data + bytes / 2, bytes - bytes / 2, &crc))
        return -1;
    uint32_t crc32v = (uint32_t)crc;
    uLong ignored = 0;
    return write_all(fd, &crc32v, 4, &ignored);
}

static int sync_dir(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

int ckpt_write(const char *path, const ckpt_meta_t *meta, const float *data, char *err,
               size_t errlen)
{
    char tmp[4200];
    /* A dot name that ckpt_find_latest never takes for a checkpoint. */
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;
    snprintf(tmp, sizeof tmp, "%.*s.%s.tmp-%ld", dirlen, path, slash ? slash + 1 : path,
             (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(e));
        errno = e;
        return -1;
    }
    errno = 0;
    const char *what = "write";
    int rc = fchmod(fd, 0600) || write_body(fd, meta, data);
    if (rc == 0) {
        what = "fsync";
        rc = fsync(fd);
    }
    int e = errno; /* of the failure, before close and unlink can change it */
    if (close(fd) != 0 && rc == 0) {
        what = "close";
        rc = -1;
        e = errno;
    }
    if (rc == 0 && ckpt_fault == CKPT_FAULT_BEFORE_RENAME)
        raise(SIGKILL);
    if (rc == 0) {
        what = "rename";
        rc = rename(tmp, path);
        e = errno;
    }
    if (rc != 0) {
        e = e ? e : EIO; /* a write of 0 bytes sets none */
        snprintf(err, errlen, "cannot write checkpoint %s (%s: %s)", path, what, strerror(e));
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (sync_dir(path) != 0) {
        e = errno;
        snprintf(err, errlen, "cannot fsync the directory of %s: %s", path, strerror(e));
        errno = e;
        return -1;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t n = read(fd, p, len > (1u << 30) ? (1u << 30) : len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

void ckpt_set_model(ckpt_meta_t *meta, const model_shape_t *shape)
{
    const model_spec_t *s = &shape->spec;
    int flat = !strcmp(model_title(s), "MLP");
    meta->nlayers = (uint32_t)shape->nlayers;
    for (int l = 0; l <= shape->nlayers; l++)
        meta->dims[l] = (uint32_t)shape->dims[l];
    meta->in_c = flat ? 0 : (uint32_t)s->c;
    meta->in_h = flat ? 0 : (uint32_t)s->h;
    meta->in_w = flat ? 0 : (uint32_t)s->w;
    for (int l = 0; l < shape->nlayers; l++) {
        meta->kind[l] = (uint16_t)s->layer[l].kind;
        meta->kernel[l] = (uint16_t)s->layer[l].kernel;
        meta->stride[l] = (uint16_t)s->layer[l].stride;
        meta->pad[l] = (uint16_t)s->layer[l].pad;
    }
}

int ckpt_model(const ckpt_meta_t *m, model_shape_t *shape, char *err, size_t errlen)
{
    if (m->nlayers < 1 || m->nlayers > MODEL_MAX_LAYERS) {
        snprintf(err, errlen, "implausible header (%u layers)", m->nlayers);
        return -1;
    }
    for (uint32_t l = 0; l <= m->nlayers; l++) {
        if (m->dims[l] < 1 || m->dims[l] > CKPT_MAX_DIM) {
            snprintf(err, errlen, "implausible header (layer width %u)", m->dims[l]);
            return -1;
        }
    }
    model_spec_t spec = {
        .c = (int)m->in_c, .h = (int)m->in_h, .w = (int)m->in_w, .nlayers = (int)m->nlayers};
    if (m->in_c == 0) /* an MLP: its input as one row */
        spec.c = spec.h = 1, spec.w = (int)m->dims[0];
    if ((uint64_t)spec.c * spec.h * spec.w != m->dims[0]) {
        snprintf(err, errlen, "implausible header (a %ux%ux%u input of %u values)", m->in_h,
                 m->in_w, m->in_c, m->dims[0]);
        return -1;
    }
    /* Each layer's outputs from its kind and the values after it: a convolution's channels are
     * those values over its output pixels, which the layers before it give. */
    int h = spec.h, w = spec.w;
    for (uint32_t l = 0; l < m->nlayers; l++) {
        layer_spec_t *s = &spec.layer[l];
        *s = (layer_spec_t){(layer_kind_t)m->kind[l], (int)m->dims[l + 1], m->kernel[l],
                            m->stride[l], m->pad[l]};
        if (s->kind == LAYER_DENSE) {
            h = w = 1;
            continue;
        }
        conv_geom_t g = {.h = h, .w = w, .kernel = s->kernel, .stride = s->stride, .pad = s->pad};
        conv_geom_finish(&g);
        if (s->kind != LAYER_CONV && s->kind != LAYER_POOL) {
            snprintf(err, errlen, "implausible header (layer %u of kind %u)", l + 1, m->kind[l]);
            return -1;
        }
        uint64_t pixels = (uint64_t)g.oh * (uint64_t)g.ow; /* a forged window: up to 2^48 */
        s->out = s->kind == LAYER_CONV && pixels > 0 ? (int)(m->dims[l + 1] / pixels) : 0;
        h = g.oh, w = g.ow;
    }
    char why[400];
    if (model_shape_build(shape, &spec, why, sizeof why)) {
        snprintf(err, errlen, "implausible header (%s)", why);
        return -1;
    }
    for (uint32_t l = 0; l <= m->nlayers; l++) {
        if ((uint32_t)shape->dims[l] != m->dims[l]) {
            snprintf(err, errlen, "implausible header (layer %u: %u values, its window makes %d)",
                     l, m->dims[l], shape->dims[l]);
            return -1;
        }
    }
    return 0;
}

/* Checks the header's fields against each other; -1 with ERR when they cannot be right. */
static int check_meta(const ckpt_meta_t *m, char *err, size_t errlen)
{
    if (m->nstate > 2) {
        snprintf(err, errlen, "implausible header (%u layers, %u state vectors)", m->nlayers,
                 m->nstate);
        return -1;
    }
    /* Values per sample fit 24 bits and weights per layer 34 (model_shape_build), so their sum
     * over at most 16 layers fits 64 bits; the parameter count is capped where the file size
     * still fits in 64 bits (and in any file system), so ckpt_file_bytes cannot overflow. */
    model_shape_t shape;
    if (ckpt_model(m, &shape, err, errlen))
        return -1;
    uint64_t n = model_params(&shape);
    if (n > CKPT_MAX_PARAMS) {
        snprintf(err, errlen, "implausible header (%llu parameters)", (unsigned long long)n);
        return -1;
    }
    if (n != m->nparams) {
        snprintf(err, errlen, "header says %llu parameters, its layers %llu",
                 (unsigned long long)m->nparams, (unsigned long long)n);
        return -1;
    }
    return 0;
}

static int read_header(int fd, const char *path, ckpt_meta_t *m, uLong *crc, char *err,
                       size_t errlen)
{
    uint8_t header[CKPT_HEADER_BYTES];
    if (read_all(fd, header, sizeof header)) {
        snprintf(err, errlen, "%s: truncated header", path);
        return -1;
    }
    uint32_t version, hbytes;
    memcpy(&version, header + 8, 4);
    memcpy(&hbytes, header + 12, 4);
    if (memcmp(header, ckpt_magic, 8) || version != CKPT_VERSION || hbytes != CKPT_HEADER_BYTES) {
        snprintf(err, errlen, "%s: not a version %d checkpoint of this program", path,
                 CKPT_VERSION);
        return -1;
    }
    cursor_t c = {header, 16};
    memset(m, 0, sizeof *m);
    header_fields(&c, m, 0);
    *crc = crc32_z(crc32(0, NULL, 0), header, sizeof header);
    if (check_meta(m, err, errlen) == 0)
        return 0;
    char why[200];
    snprintf(why, sizeof why, "%s", err);
    snprintf(err, errlen, "%s: %s", path, why);
    return -1;
}

/* Reads the data and the CRC after the header, and checks them. */
static int read_data(int fd, const char *path, ckpt_t *out, uLong crc, char *err, size_t errlen)
{
    size_t bytes = (1 + (size_t)out->meta.nstate) * out->meta.nparams * sizeof(float);
    out->data = malloc(bytes ? bytes : 1);
    if (!out->data) {
        snprintf(err, errlen, "%s: out of host memory for %zu bytes", path, bytes);
        return -1;
    }
    uint32_t stored;
    if (read_all(fd, out->data, bytes) || read_all(fd, &stored, 4)) {
        snprintf(err, errlen, "%s: truncated", path);
        return -1;
    }
    if ((uint32_t)crc32_z(crc, (const Bytef *)out->data, bytes) != stored) {
        snprintf(err, errlen, "%s: checksum mismatch (the file is corrupt)", path);
        return -1;
    }
    return 0;
}

int ckpt_read(const char *path, ckpt_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    uLong crc = 0;
    int rc = fstat(fd, &st) == 0 ? 0 : -1;
    if (rc != 0)
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    if (rc == 0)
        rc = read_header(fd, path, &out->meta, &crc, err, errlen);
    if (rc == 0 && (uint64_t)st.st_size != ckpt_file_bytes(&out->meta)) {
        snprintf(err, errlen, "%s: %lld bytes, its header needs %llu (truncated or corrupt)", path,
                 (long long)st.st_size, (unsigned long long)ckpt_file_bytes(&out->meta));
        rc = -1;
    }
    if (rc == 0)
        rc = read_data(fd, path, out, crc, err, errlen);
    close(fd);
    if (rc != 0)
        ckpt_free(out);
    return rc;
}

void ckpt_free(ckpt_t *c)
{
    free(c->data);
    c->data = NULL;
}

int ckpt_same_model(const ckpt_meta_t *a, const ckpt_meta_t *b)
{
    return a->nlayers == b->nlayers && !memcmp(a->dims, b->dims, sizeof a->dims) &&
           a->in_c == b->in_c && a->in_h == b->in_h && a->in_w == b->in_w &&
           !memcmp(a->kind, b->kind, sizeof a->kind) &&
           !memcmp(a->kernel, b->kernel, sizeof a->kernel) &&
           !memcmp(a->stride, b->stride, sizeof a->stride) &&
           !memcmp(a->pad, b->pad, sizeof a->pad);
}

int ckpt_compatible(const ckpt_meta_t *a, const ckpt_meta_t *b, char *err, size_t errlen)
{
    const char *field = NULL;
    if (!ckpt_same_model(a, b))
        field = "model (--model, --hidden, --layers, or the image size of the data)";
    else if (a->nstate != b->nstate || a->optimizer != b->optimizer)
        field = "--optimizer";
    else if (a->lr != b->lr || a->lr_schedule != b->lr_schedule ||
             a->warmup_steps != b->warmup_steps)
        field = "--lr, --lr-schedule or --warmup-steps";
    else if (a->momentum != b->momentum || a->beta1 != b->beta1 || a->beta2 != b->beta2 ||
             a->eps != b->eps || a->weight_decay != b->weight_decay)
        field = "optimizer setting (--momentum, --weight-decay)";
    else if (a->seed != b->seed)
        field = "--seed";
    else if (a->augment != b->augment)
        field = "--augment";
    else if (a->global_batch != b->global_batch)
        field = "global batch (replicas x --gradient-accumulation x --batch-size)";
    else if (a->schedule_steps != b->schedule_steps || a->train_samples != b->train_samples)
        field = "length of training (--epochs, --train-samples)";
    else if (a->grad_dtype != b->grad_dtype || a->grad_scale != b->grad_scale)
        field = "--grad-dtype or --grad-scale";
    if (!field)
        return 0;
    snprintf(err, errlen, "it was written by a run with a different %s", field);
    return -1;
}

/* The step of a checkpoint's file name, or -1 when NAME is not one. */
static long long name_step(const char *name)
{
    unsigned long long step;
    int used = 0;
    if (strlen(name) != 20 || sscanf(name, "ckpt-%10llu.gclt%n", &step, &used) != 1 || used != 20)
        return -1;
    return (long long)step;
}

static int cmp_desc(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The steps of DIR's checkpoints, newest first, in *OUT (malloc'd). Returns how many, or -1. */
static int list_steps(const char *dir, long long **out)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0, cap = 0;
    long long *steps = NULL;
    for (struct dirent *e; (e = readdir(d));) {
        long long s = name_step(e->d_name);
        if (s < 0)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            long long *p = realloc(steps, (size_t)cap * sizeof *p);
            if (!p)
                break;
            steps = p;
        }
        steps[n++] = s;
    }
    closedir(d);
    if (n > 0)
        qsort(steps, (size_t)n, sizeof *steps, cmp_desc);
    *out = steps;
    return n;
}

int ckpt_find_latest(const char *dir, ckpt_t *out, void (*warn)(void *ctx, const char *text),
                     void *ctx, char *err, size_t errlen)
{
    long long *steps = NULL;
    int n = list_steps(dir, &steps);
    if (n < 0) {
        snprintf(err, errlen, "cannot read checkpoint directory %s: %s", dir, strerror(errno));
        return -1;
    }
    int found = 0;
    for (int i = 0; i < n && !found; i++) {
        char path[4200], why[4600];
        ckpt_path(dir, (uint64_t)steps[i], path, sizeof path);
        if (ckpt_read(path, out, why, sizeof why) == 0 && out->meta.step == (uint64_t)steps[i]) {
            found = 1;
        } else {
            if (out->data) { /* verified, but not the step its name says: renamed by hand */
                snprintf(why, sizeof why, "%s: holds step %llu", path,
                         (unsigned long long)out->meta.step);
                ckpt_free(out);
            }
            char text[4700];
            snprintf(text, sizeof text, "skipping corrupt checkpoint %s", why);
            warn(ctx, text);
        }
    }
    free(steps);
    return found;
}

int ckpt_prune(const char *dir, int keep)
{
    int removed = 0;
    long long *steps = NULL;
    int n = list_steps(dir, &steps);
    for (int i = keep; i < n; i++) {
        char path[4200];
        ckpt_path(dir, (uint64_t)steps[i], path, sizeof path);
        removed += unlink(path) == 0;
    }
    free(steps);
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, ".ckpt-", 6) || !strstr(e->d_name, ".gclt.tmp-"))
            continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        removed += unlink(path) == 0;
    }
    if (d)
        closedir(d);
    return removed;
}

int ckpt_make_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (mkdir(dir, 0700) == 0 || (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)))
        return 0;
    snprintf(err, errlen, "cannot create checkpoint directory %s: %s", dir,
             errno == EEXIST ? "a file of that name exists" : strerror(errno));
    return -1;
}
