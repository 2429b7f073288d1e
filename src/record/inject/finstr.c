/* record/inject/finstr.c: -finstrument-functions hooks (libgpuprof_finstr):
 * every instrumented function call becomes a range in gp_default(), named
 * later with dladdr. Built only with -DGP_INSTRUMENT_FUNCTIONS=ON. */
#include <gpuprof/gpuprof.h>
#include <stdatomic.h>

#define NOINSTR __attribute__((no_instrument_function))

static atomic_int finstr_on = 1;
/* Per thread: which open calls were recorded, so that an exit closes only a
 * range its enter opened (calls deeper than MAXD are not recorded). */
#define MAXD 1024
static __thread unsigned char rec_at[MAXD];
static __thread unsigned depth;

NOINSTR void gp_finstr_enable(int on)
{
    atomic_store_explicit(&finstr_on, on != 0, memory_order_relaxed);
}

/* The compiler-called hooks (exported for the instrumented program). */
GP_API void __cyg_profile_func_enter(void *fn, void *site) NOINSTR;
GP_API void __cyg_profile_func_exit(void *fn, void *site) NOINSTR;

void __cyg_profile_func_enter(void *fn, void *site)
{
    unsigned d = depth++;
    if (d >= MAXD) return;
    rec_at[d] = 0;
    if (!atomic_load_explicit(&finstr_on, memory_order_relaxed)) return;
    gp_profiler *p = gp_default();
    if (p) rec_at[d] = (unsigned char)gp_func_enter_(p, fn);
}

void __cyg_profile_func_exit(void *fn, void *site)
{
    if (depth == 0) return;
    unsigned d = --depth;
    if (d < MAXD && rec_at[d]) gp_range_end(gp_default());
}
