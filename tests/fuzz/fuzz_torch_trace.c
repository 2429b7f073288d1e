/* tests/fuzz/fuzz_torch_trace.c: libFuzzer target for the TORCH_TRACE log
 * reader and what reads its model (totals, advice, JSON writer): a log or a
 * one-line error, never a crash; corrupt lines are counted, never fatal
 * unless the text is not a log at all. */
#include "analysis/advise.h"
#include "analysis/compile.h"
#include "report/compile.h"
#include "trace/torch_trace.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gp_tlog *l = NULL;
    gp_err err;
    memset(&err, 0, sizeof err);
    gp_tt_opts o = {1};
    int rc = gp_tlog_read_mem(data, size, "fuzz.log", &o, &l, &err);
    if (rc) {
        if (l || !err.msg[0] || strchr(err.msg, '\n')) abort(); /* the error contract */
        return 0;
    }
    gp_compile_totals t;
    gp_compile_totals_of(l, &t);
    if (t.compiles != l->metrics_records || t.frames > t.compiles) abort();
    const gp_tlog *logs[2] = {l, l};
    gp_advice_list adv;
    gp_rank_divergence div;
    if (gp_advise_compile(logs, 1, NULL, &adv) == 0) {
        if (gp_rank_divergence_of(logs, 2, &div) == 0) {
            if (div.n) abort(); /* a log agrees with itself */
            gp_compile_result r = {logs, 1, &adv, &div, NULL, NULL, NULL, NULL};
            gp_sbuf b = {0};
            gp_compile_json(&r, &b);
            gp_sbuf_free(&b);
            gp_rank_divergence_free(&div);
        }
        gp_advice_list_free(&adv);
    }
    gp_tlog_destroy(l);
    return 0;
}
