/* core/demangle.c: demangling through __cxa_demangle of the process's own C++
 * runtime, else of libstdc++.so.6 loaded with dlopen, so that gpuprof needs no
 * C++ at build time and works where no C++ runtime exists (names stay as
 * they are). */
#include "core/demangle.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

typedef char *(*cxa_demangle_fn)(const char *, char *, size_t *, int *);

static cxa_demangle_fn demangle_fn;
static pthread_once_t demangle_once = PTHREAD_ONCE_INIT;

static void find_demangler(void)
{
    void *sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
    if (!sym) {
        void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
        if (h) sym = dlsym(h, "__cxa_demangle"); /* kept loaded for the process */
    }
    demangle_fn = (cxa_demangle_fn)sym; /* dlsym's object-to-function conversion (POSIX) */
}

char *gp_demangle(const char *mangled)
{
    if (!mangled || strncmp(mangled, "_Z", 2) != 0) return NULL;
    pthread_once(&demangle_once, find_demangler);
    if (!demangle_fn) return NULL;
    int status = -1;
    char *out = demangle_fn(mangled, NULL, NULL, &status);
    if (status != 0) return NULL; /* on failure the runtime returns NULL */
    return out;
}
