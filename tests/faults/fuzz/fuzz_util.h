/* Shared by the file-reader fuzz targets: the input as a file without touching the disk. */
#ifndef FAULTS_FUZZ_UTIL_H
#define FAULTS_FUZZ_UTIL_H

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes DATA to a new memory file; returns its descriptor (PATH gets /proc/self/fd/N), or -1. */
static int fuzz_memfile(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
