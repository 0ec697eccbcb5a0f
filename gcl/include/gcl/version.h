/*
 * libgcl's version. The build reads these three numbers (CMakeLists.txt), so this header is the
 * one place the version is written; gcl_version() says which library a program runs against.
 */
#ifndef GCL_VERSION_H
#define GCL_VERSION_H

#define GCL_VERSION_MAJOR 0
#define GCL_VERSION_MINOR 2
#define GCL_VERSION_PATCH 0

/* X.Y.Z as one comparable number, as NCCL_VERSION does: X * 10000 + Y * 100 + Z. */
#define GCL_VERSION(x, y, z) ((x)*10000 + (y)*100 + (z))
#define GCL_VERSION_CODE     GCL_VERSION(GCL_VERSION_MAJOR, GCL_VERSION_MINOR, GCL_VERSION_PATCH)

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)
/* The GCL_VERSION_CODE of the library this program runs against (which may be newer than the
 * header it was compiled with). */
int gcl_version(void);
/* The same as "X.Y.Z"; never NULL. */
const char *gcl_version_string(void);
#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* GCL_VERSION_H */
