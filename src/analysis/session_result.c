/* analysis/session_result.c: see session_result.h. */
#include "analysis/session_result.h"
#include "analysis/advise.h"
#include "analysis/memory.h"
#include "analysis/summary.h"
#include "core/sbuf.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_ktotal(const void *a, const void *b)
{
    const gp_kernel_row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns < y->total_ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

int gp_session_build(gp_session_result *out, const gp_session_facts *f, gp_summary_row *rows,
                     size_t nrows, gp_kernel_row *krows, size_t nk, const gp_trace *t)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", f->name ? f->name : "session");
    out->total_ns = f->total_ns;
    out->cpu_ns = f->cpu_ns;
    out->gpu_valid = f->gpu_valid;
    out->gpu_ns = f->gpu_valid ? f->gpu_ns : 0;
    out->kernel_launches = f->kernel_launches;
    out->mem_valid = f->mem_valid;
    out->mem_peak_bytes = f->mem_valid ? f->mem_peak_bytes : 0;
    out->mem_allocated_bytes = f->mem_valid ? f->mem_allocated_bytes : 0;
    out->reserved_valid = f->reserved_valid;
    out->mem_reserved_bytes = f->reserved_valid ? f->mem_reserved_bytes : 0;
    gp_summary_rows_by_self(rows, nrows);
    for (size_t i = GP_SESSION_TOP; i < nrows; i++) free(rows[i].name);
    out->bottlenecks = rows;
    out->nbottlenecks = nrows > GP_SESSION_TOP ? GP_SESSION_TOP : nrows;
    if (krows) qsort(krows, nk, sizeof *krows, cmp_ktotal);
    for (size_t i = GP_SESSION_TOP; i < nk; i++) free(krows[i].name);
    out->kernels = krows;
    out->nkernels = nk > GP_SESSION_TOP ? GP_SESSION_TOP : nk;
    gp_advice_list l;
    if (gp_advise(t, NULL, &l)) goto oom;
    out->recommendations = calloc(l.n + 1, sizeof *out->recommendations);
    if (!out->recommendations) {
        gp_advice_list_free(&l);
        goto oom;
    }
    for (size_t i = 0; i < l.n; i++) {
        const gp_advice *a = &l.v[i];
        gp_sbuf b = {0};
        gp_sbuf_printf(&b, "[%s] %s: %s; %s", gp_priority_name(a->priority), a->rule->id,
                       a->finding, a->rule->hint);
        char *s = strdup(gp_sbuf_cstr(&b));
        gp_sbuf_free(&b);
        if (!s) {
            gp_advice_list_free(&l);
            goto oom;
        }
        out->recommendations[out->nrecommendations++] = s;
    }
    gp_advice_list_free(&l);
    return 0;
oom:
    gp_session_result_free(out);
    return GP_ENOMEM;
}

int gp_session_of_trace(const gp_trace *t, const char *name, int64_t total_ns, int64_t cpu_ns,
                        gp_session_result *out)
{
    memset(out, 0, sizeof *out);
    gp_summary s;
    if (gp_summary_compute(t, &s)) return GP_ENOMEM;
    gp_session_facts f = {0};
    f.name = name;
    f.total_ns = total_ns;
    f.cpu_ns = cpu_ns < 0 ? 0 : cpu_ns;
    f.kernel_launches = s.group_count[GP_G_KERNEL];
    f.gpu_valid = f.kernel_launches > 0;
    f.gpu_ns = s.group_total_ns[GP_G_KERNEL];
    gp_memory m;
    if (gp_memory_compute(t, &m)) {
        gp_summary_free(&s);
        return GP_ENOMEM;
    }
    for (size_t i = 0; i < m.n; i++) {
        f.mem_valid = 1;
        if (m.dev[i].peak_allocated > f.mem_peak_bytes) f.mem_peak_bytes = m.dev[i].peak_allocated;
        f.mem_allocated_bytes += m.dev[i].end_allocated;
    }
    gp_memory_free(&m);
    size_t idx[GP_SESSION_TOP];
    size_t nb = gp_summary_top(&s, gp_summary_bottleneck_mask(&s), idx, GP_SESSION_TOP);
    size_t nk = 0;
    for (size_t i = 0; i < s.n; i++) nk += s.rows[i].group == GP_G_KERNEL;
    gp_summary_row *rows = calloc(nb + 1, sizeof *rows);
    gp_kernel_row *krows = calloc(nk + 1, sizeof *krows);
    int oom = !rows || !krows;
    for (size_t i = 0; i < nb && !oom; i++)
        oom = gp_summary_row_of(t, &s.rows[idx[i]], &rows[i]) != 0;
    size_t k = 0;
    for (size_t i = 0; i < s.n && !oom; i++) {
        const gp_op_row *o = &s.rows[i];
        if (o->group != GP_G_KERNEL) continue;
        gp_kernel_row *w = &krows[k++];
        w->name = strdup(gp_trace_s(t, o->name));
        oom = !w->name;
        w->backend = GP_BACKEND_UNSET;
        w->count = o->st.count;
        w->total_ns = (int64_t)o->st.sum;
        w->min_ns = (int64_t)o->st.min;
        w->max_ns = (int64_t)o->st.max;
        w->mean_ns = o->st.mean;
        w->std_ns = o->st.std;
    }
    gp_summary_free(&s);
    if (oom) {
        gp_summary_rows_free(rows, nb);
        gp_kernel_rows_free(krows, nk);
        return GP_ENOMEM;
    }
    return gp_session_build(out, &f, rows, nb, krows, nk, t);
}
