/*
 * How much freed memory the process keeps for reuse (glibc's malloc). libfabric's tcp provider
 * allocates a buffer for every piece of a message that arrives before its receive is posted (a
 * faster peer's next step) and frees it once the receive comes: two 256 KiB buffers a call in a
 * 1 MiB all_reduce across 2 hosts. glibc hands the free top of a heap back to the kernel above
 * M_TRIM_THRESHOLD, which it keeps at twice the largest chunk it has unmapped (512 KiB here), so
 * each of those frees was an madvise(MADV_DONTNEED) and the next allocation faulted its pages
 * in again: 100,000 page faults a second across the two instances (perf stat), and a kernel
 * whose free memory churns that fast copies socket data into fresh pages.
 */
#ifndef GCL_HEAP_H
#define GCL_HEAP_H

/* Lets glibc keep up to KEEP bytes of freed heap memory (M_TRIM_THRESHOLD) and serve requests
 * below half of it, at most 32 MiB, from the heap (M_MMAP_THRESHOLD), once per process. Does
 * nothing when KEEP is 0 or the user set either threshold (MALLOC_TRIM_THRESHOLD_,
 * MALLOC_MMAP_THRESHOLD_, GLIBC_TUNABLES). Returns 1 if it set them. */
int gcl_heap_keep(long keep);

#endif /* GCL_HEAP_H */
