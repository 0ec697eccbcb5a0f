/*
 * Signal dispositions that libgcl's own dependencies get wrong.
 *
 * libfabric links the PSM providers, and their libraries (libinfinipath, libpsm2) install
 * handlers for SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGILL, SIGABRT and SIGFPE from a library
 * constructor, before main runs. Their SIGINT and SIGTERM handler calls exit(1) from the signal
 * handler: exit runs every atexit function and library destructor (OpenBLAS frees its buffers:
 * "BLAS : Bad memory unallocation!") while the program's threads still compute with them, so a
 * `timeout 5 train | tail` ended in a SIGSEGV, whose handler then printed "terminated with
 * signal 11 ... Backtrace:" and wrote a .btr file into the working directory. The crash handlers
 * also hide a crash from the parent (exit status 1, not the signal) and override
 * AddressSanitizer's.
 *
 * A library's constructors run after those of the libraries it depends on, so libgcl's runs
 * after theirs and gives every such signal back its default action, when (and only when) the
 * installed handler lives in one of those libraries: a handler of the program's own, or of a
 * sanitizer, is left alone. gcl_preempt_enable (api/preempt.c) installs libgcl's own SIGTERM and
 * SIGINT handlers on top.
 */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include "instance/signals.h"

/* Libraries whose handlers are undone: name prefixes of the shared objects. */
static const char *const foreign_libs[] = {"libinfinipath.so", "libpsm_infinipath.so",
                                           "libpsm2.so"};

static int is_foreign(void (*fn)(void))
{
    Dl_info info;
    if (!fn || dladdr((void *)fn, &info) == 0 || !info.dli_fname)
        return 0;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    for (size_t i = 0; i < sizeof foreign_libs / sizeof foreign_libs[0]; i++)
        if (strncmp(base, foreign_libs[i], strlen(foreign_libs[i])) == 0)
            return 1;
    return 0;
}

int gcl_signals_restore_defaults(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE};
    int restored = 0;
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        if (sigaction(sigs[i], NULL, &sa) != 0)
            continue;
        void (*fn)(void) = (sa.sa_flags & SA_SIGINFO) ? (void (*)(void))sa.sa_sigaction
                                                      : (void (*)(void))sa.sa_handler;
        if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN || !is_foreign(fn))
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[i], &sa, NULL) == 0)
            restored++;
    }
    return restored;
}

__attribute__((constructor)) static void signals_init(void)
{
    gcl_signals_restore_defaults();
}
