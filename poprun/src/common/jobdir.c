/*
 * The job's own files and their removal; see jobdir.h.
 */
#include "common/jobdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gcl/popdist_env.h"
#include "common/util.h"

#define SHM_ROOT     "/dev/shm"
#define LOCK_NAME    "poprun.lock"
#define IDLE_POLL_MS 50

/* Whether S is 1 to MAX letters, digits, '-' or '_'. */
static bool word_ok(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n == 0 || n > max)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '-' || *s == '_'))
            return false;
    return true;
}

int jobdir_open(struct jobdir *d, char *err, size_t errlen)
{
    const char *name = getenv(POPRUN_ENV_JOB_NAME);
    unsigned char r[8];
    char hex[17];
    memset(d, 0, sizeof(*d));
    if (name && !word_ok(name, 40))
        return errf(err, errlen, "%s='%.60s': a job name is 1 to 40 letters, digits, '-' or '_'",
                    POPRUN_ENV_JOB_NAME, name);
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        unsigned long x = (unsigned long)getpid() * 2654435761UL ^ (unsigned long)time(NULL);
        memcpy(r, &x, sizeof(r));
    }
    for (size_t i = 0; i < sizeof(r); i++)
        snprintf(hex + 2 * i, 3, "%02x", r[i]);
    snprintf(d->id, sizeof(d->id), "%s-%s", name ? name : "job", hex);
    snprintf(d->path, sizeof(d->path), SHM_ROOT "/poprun-%s", d->id);
    return 0;
}

void jobdir_make(struct jobdir *d)
{
    snprintf(d->shm, sizeof(d->shm), "%s", d->path);
    if (mkdir(d->shm, 0700) != 0)
        d->shm[0] = '\0';
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

/* rm -rf PATH; 1 if it existed. */
static int remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return 0;
    nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return 1;
}

/* Removes every entry of DIR (not DIR itself); returns how many. */
static int empty_dir(const char *dir)
{
    DIR *dp = opendir(dir);
    int n = 0;
    if (!dp)
        return 0;
    for (struct dirent *e; (e = readdir(dp));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        n += remove_tree(p);
        free(p);
    }
    closedir(dp);
    return n;
}

/* Where OpenMPI keeps its session directories, as it finds it. */
static const char *tmp_base(void)
{
    static const char *const vars[] = {"TMPDIR", "TEMP", "TMP"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return v;
    }
    return "/tmp";
}

/* The job family of mpirun's contact file ("JOBID.VPID;tcp://..."), or -1. */
static long job_family(const char *session)
{
    char *path = xasprintf("%s/contact.txt", session);
    FILE *f = fopen(path, "r");
    unsigned long jobid = 0;
    long fam = -1;
    free(path);
    if (!f)
        return -1;
    if (fscanf(f, "%lu.", &jobid) == 1)
        fam = (long)(jobid >> 16);
    fclose(f);
    return fam;
}

/* OpenMPI's session directories of a dead mpirun PID, in every ompi.NODE.UID of this machine's
 * temporary directory (network namespaces are other NODEs on the same disk); each parent left
 * empty goes too, as OpenMPI's own clean-up would have removed it. */
static int sweep_sessions(pid_t pid)
{
    const char *base = tmp_base();
    char suffix[32], pidname[32], jfname[32] = "";
    DIR *dp = opendir(base);
    int n = 0;
    long fam = -1;
    if (!dp)
        return 0;
    snprintf(suffix, sizeof(suffix), ".%u", (unsigned)getuid());
    snprintf(pidname, sizeof(pidname), "pid.%d", (int)pid);
    struct strvec tops = STRVEC_INIT;
    for (struct dirent *e; (e = readdir(dp));) {
        size_t len = strlen(e->d_name), sl = strlen(suffix);
        if (strncmp(e->d_name, "ompi.", 5) == 0 && len > sl &&
            strcmp(e->d_name + len - sl, suffix) == 0)
            strvec_push_take(&tops, xasprintf("%s/%s", base, e->d_name));
    }
    closedir(dp);
    for (int i = 0; i < tops.n && fam < 0; i++) {
        char *s = xasprintf("%s/%s", tops.v[i], pidname);
        fam = job_family(s);
        free(s);
    }
    if (fam >= 0)
        snprintf(jfname, sizeof(jfname), "jf.%ld", fam);
    for (int i = 0; i < tops.n; i++) {
        char *s = xasprintf("%s/%s", tops.v[i], pidname);
        n += remove_tree(s);
        free(s);
        if (jfname[0]) {
            s = xasprintf("%s/%s", tops.v[i], jfname);
            n += remove_tree(s);
            free(s);
        }
        if (n > 0)
            rmdir(tops.v[i]); /* only when nothing else is in it */
    }
    strvec_free(&tops);
    return n;
}

/* /dev/shm/gcl-ID-*: host boxes whose instances died before they unlinked them. */
static int sweep_boxes(const struct jobdir *d)
{
    char prefix[96];
    DIR *dp = opendir(SHM_ROOT);
    int n = 0;
    if (!dp)
        return 0;
    snprintf(prefix, sizeof(prefix), "gcl-%s-", d->id);
    for (struct dirent *e; (e = readdir(dp));) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char *p = xasprintf(SHM_ROOT "/%s", e->d_name);
        n += unlink(p) == 0;
        free(p);
    }
    closedir(dp);
    return n;
}

int jobdir_sweep(const struct jobdir *d, pid_t mpirun, bool failed)
{
    int n = 0;
    if (d->shm[0])
        n += empty_dir(d->shm);
    if (mpirun > 0)
        n += sweep_sessions(mpirun);
    if (failed)
        n += sweep_boxes(d);
    return n;
}

void jobdir_close(struct jobdir *d)
{
    if (d->path[0])
        remove_tree(d->path);
    d->shm[0] = '\0';
}

const char *jobdir_for_instance(const char *id, char *buf, size_t len)
{
    struct stat st;
    if (!id || !word_ok(id, 60))
        return NULL;
    snprintf(buf, len, SHM_ROOT "/poprun-%s", id);
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() ? buf : NULL;
}

int jobdir_hold(const char *dir)
{
    char *path = xasprintf("%s/" LOCK_NAME, dir);
    int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
    free(path);
    if (fd >= 0 && flock(fd, LOCK_SH) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

int jobdir_wait_idle(const struct jobdir *d, int ms)
{
    if (!d->path[0])
        return 0;
    char *path = xasprintf("%s/" LOCK_NAME, d->path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (fd < 0)
        return 0;
    int rc = -1;
    for (int waited = 0;; waited += IDLE_POLL_MS) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            rc = 0;
            break;
        }
        if (waited >= ms || errno != EWOULDBLOCK)
            break;
        struct timespec ts = {0, IDLE_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    close(fd);
    return rc;
}
