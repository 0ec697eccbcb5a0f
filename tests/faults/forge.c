/*
 * faults-forge CHECK: a process of another job (or another user) against a job's host box and
 * network headers, with libgcl's own code (gcl_hostbox_create, gcl_hostbox_attach, gcl_wire_decode
 * from gcl/src), since these are what a real instance runs.
 *
 *   attach   A segment made as an instance makes it (gcl_hostbox_create: O_EXCL, mode 0600, the
 * job's token in its header) must be refused to a process that brings another token, and refused
 * even with the right token once its mode or owner is not the job's, or its size disagrees with its
 * header; the right token on the intact segment is let in. A second create of a name that exists (a
 * squatter got there first) must fail, not adopt the squatter's segment. wire     Network message
 * headers with another job's token, or none, are refused before anything in them is used; the job's
 * own header is accepted. Exit status 0 when every check holds, 1 otherwise (each check prints one
 * line).
 */
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "job/hostbox.h"
#include "transport/wire.h"

static int failures;

static void check(int ok, const char *what, const char *detail)
{
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail[0] ? ": " : "", detail);
    failures += !ok;
}

static int attach_refused(const char *name, const uint8_t token[16], char *err, size_t len)
{
    gcl_hostbox_t hb;
    err[0] = '\0';
    gcl_status_t rc = gcl_hostbox_attach(&hb, name, token, err, len);
    if (rc == GCL_OK) {
        gcl_hostbox_destroy(&hb);
        return 0;
    }
    return 1;
}

static int attach_checks(void)
{
    uint8_t token[16], other[16], nonce[8];
    if (getrandom(token, sizeof token, 0) != 16 || getrandom(other, sizeof other, 0) != 16 ||
        getrandom(nonce, sizeof nonce, 0) != 8)
        return 1;
    char name[64], err[256];
    snprintf(name, sizeof name, "/gcl-faults-forge-%d-%02x%02x%02x%02x", (int)getpid(), nonce[0],
             nonce[1], nonce[2], nonce[3]);
    gcl_hostbox_sizes_t sizes = {2, 2, 4096, 65536, 0};
    gcl_hostbox_t job;
    gcl_status_t rc = gcl_hostbox_create(&job, name, token, 4, &sizes, err, sizeof err);
    check(rc == GCL_OK, "the job creates its segment", rc == GCL_OK ? name : err);
    if (rc != GCL_OK)
        return 1;
    char path[128];
    snprintf(path, sizeof path, "/dev/shm%s", name);
    struct stat st;
    int have = stat(path, &st) == 0;
    char detail[160];
    snprintf(detail, sizeof detail, "mode %04o, owner %d", have ? (unsigned)st.st_mode & 07777 : 0,
             have ? (int)st.st_uid : -1);
    check(have && (st.st_mode & 07777) == 0600 && st.st_uid == geteuid(),
          "the segment is mode 0600 and owned by the job's user", detail);

    gcl_hostbox_t squat;
    rc = gcl_hostbox_create(&squat, name, other, 4, &sizes, err, sizeof err);
    check(rc != GCL_OK, "a second create of an existing name fails (O_EXCL)", err);
    if (rc == GCL_OK)
        gcl_hostbox_destroy(&squat);

    check(attach_refused(name, other, err, sizeof err), "another job's token is refused", err);
    uint8_t zero[16] = {0};
    check(attach_refused(name, zero, err, sizeof err), "an all-zero token is refused", err);
    check(!attach_refused(name, token, err, sizeof err), "the job's own token is let in", err);

    /* The mode: a segment someone opened up to others is no longer trusted. */
    int fd = shm_open(name, O_RDWR, 0);
    if (fd >= 0 && fchmod(fd, 0644) == 0) {
        check(attach_refused(name, token, err, sizeof err),
              "a segment of mode 0644 is refused, even with the token", err);
        if (fchmod(fd, 0600) != 0)
            check(0, "restoring the mode", "fchmod failed");
    } else {
        check(0, "opening the segment to change its mode", "shm_open or fchmod failed");
    }
    /* The owner: only root can give a segment away; elsewhere this check is skipped. */
    struct passwd *nobody = getpwnam("nobody");
    if (fd >= 0 && geteuid() == 0 && nobody && fchown(fd, nobody->pw_uid, nobody->pw_gid) == 0) {
        check(attach_refused(name, token, err, sizeof err),
              "a segment owned by another user is refused, even with the token", err);
        if (fchown(fd, 0, 0) != 0)
            check(0, "restoring the owner", "fchown failed");
    } else {
        printf("skip a segment owned by another user (needs root and a user 'nobody')\n");
    }
    /* The size: a header that claims more than the segment holds. */
    if (fd >= 0 && ftruncate(fd, (off_t)job.size + 4096) == 0) {
        check(attach_refused(name, token, err, sizeof err),
              "a segment whose size disagrees with its header is refused", err);
        if (ftruncate(fd, (off_t)job.size) != 0)
            check(0, "restoring the size", "ftruncate failed");
    }
    if (fd >= 0)
        close(fd);

    /* Unlinked (as the host leader does once every local instance has mapped it): nobody else
     * can even open it by name. */
    gcl_hostbox_unlink(&job);
    check(attach_refused(name, token, err, sizeof err) && access(path, F_OK) != 0,
          "once unlinked, the segment cannot be opened by name", err);
    gcl_hostbox_destroy(&job);
    return 0;
}

static void wire_checks(void)
{
    uint8_t token[16], other[16];
    if (getrandom(token, sizeof token, 0) != 16 || getrandom(other, sizeof other, 0) != 16) {
        check(0, "getrandom", "");
        return;
    }
    gcl_wire_header_t h, out;
    memset(&h, 0, sizeof h);
    h.total = 256;
    h.sim_send = 1;
    h.sim_time = 2;
    h.sig.dtype = 0;
    h.sig.gsize = 4;
    h.sig.root = -1;
    h.sig.count = 64;
    char why[160] = "";
    memcpy(h.token, token, 16);
    check(gcl_wire_decode(&h, sizeof h, token, &out, why, sizeof why) == 0,
          "a header with the job's token is accepted", why);
    memcpy(h.token, other, 16);
    check(gcl_wire_decode(&h, sizeof h, token, &out, why, sizeof why) != 0 && strstr(why, "token"),
          "a header with another job's token is refused", why);
    memset(h.token, 0, 16);
    check(gcl_wire_decode(&h, sizeof h, token, &out, why, sizeof why) != 0,
          "a header with no token is refused", why);
    memcpy(h.token, token, 16);
    check(gcl_wire_decode(&h, sizeof h - 1, token, &out, why, sizeof why) != 0,
          "a header one byte short is refused", why);
}

int main(int argc, char **argv)
{
    if (argc != 2 || (strcmp(argv[1], "attach") && strcmp(argv[1], "wire"))) {
        fprintf(stderr, "usage: faults-forge attach|wire\n");
        return 2;
    }
    if (!strcmp(argv[1], "attach"))
        failures += attach_checks();
    else
        wire_checks();
    printf("faults-forge %s: %s\n", argv[1], failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
}
