/* tests/test_torch_trace.c: the TORCH_TRACE log reader (trace/torch_trace.c)
 * on small logs in memory: envelopes, payloads, the str table, restarts,
 * JSON that the envelope skimmer must refuse (each a counted corrupt line
 * with its number), not-a-log and truncation errors; and the fused-op count
 * of Inductor kernel names (analysis/compile.c). */
#include "analysis/compile.h"
#include "test.h"
#include "trace/torch_trace.h"

#define P "V1120 10:00:00.000000 1 a.py:1] "

static gp_tlog *read_text(const char *s, gp_err *e)
{
    gp_tlog *l = NULL;
    gp_tt_opts o = {1};
    memset(e, 0, sizeof *e);
    if (gp_tlog_read_mem(s, strlen(s), "t.log", &o, &l, e)) return NULL;
    return l;
}

TEST(records_and_payloads)
{
    const char *s =
        P "{\"str\": [\"/x/train.py\", 0]}\n" P
          "{\"dynamo_start\": {\"stack\": [{\"line\": 7, \"name\": \"f\", \"filename\": 0}]}, "
          "\"frame_id\": 2, \"frame_compile_id\": 1, \"attempt\": 0}\n" P
          "{\"chromium_event\": {}, \"has_payload\": \"h\"}\n"
          "\t{\"name\": \"dynamo\", \"ts\": 1000.5, \"ph\": \"B\", \"tid\": 0, \"args\": "
          "{\"big\": [\"\\u00e9\\n\", {\"a\": [1, -2.5e3, true, null]}], \"compile_id\": "
          "\"2/1\"}}\n" P "{\"chromium_event\": {}, \"has_payload\": \"h\"}\n"
          "\t{\"name\": \"dynamo\", \"ts\": 3000, \"ph\": \"E\", \"tid\": 0, \"args\": {}}\n" P
          "{\"artifact\": {\"name\": \"recompile_reasons\", \"encoding\": \"json\"}, \"frame_id\": "
          "2, "
          "\"frame_compile_id\": 1, \"attempt\": 0, \"has_payload\": \"h\"}\n"
          "\t[\n\t\"size mismatch\"\n\t]\n" P
          "{\"compilation_metrics\": {\"co_name\": \"f\", \"dynamo_config\": \"{\\\"x\\\": 1}\", "
          "\"entire_frame_compile_time_s\": null, \"dynamo_cumulative_compile_time_us\": 1500000, "
          "\"restart_reasons\": [\"a\", \"b\"], \"fail_type\": null}, \"frame_id\": 2, "
          "\"frame_compile_id\": 1, \"attempt\": 0}";
    gp_err e;
    gp_tlog *l = read_text(s, &e);
    if (!l) GP_FAIL_("read: %s", e.msg);
    ASSERT_EQ_INT(l->corrupt, 0);
    ASSERT_EQ_INT(l->compiles.n, 1);
    const gp_tt_compile *c = &l->compiles.v[0];
    ASSERT_EQ_STR(c->id, "2/1");
    ASSERT_EQ_INT(c->status, GP_TT_OK);
    ASSERT_EQ_INT(c->stack.n, 1);
    ASSERT_EQ_STR(gp_tlog_s(l, c->stack.v[0].file), "/x/train.py");
    ASSERT_EQ_INT(c->restart_reasons.n, 2);
    ASSERT_EQ_INT(c->recompile_reasons.n, 1);
    ASSERT_EQ_STR(gp_tlog_s(l, c->recompile_reasons.v[0]), "size mismatch");
    ASSERT_NEAR(gp_compile_time_s(c), 1.5, 1e-12);
    ASSERT_EQ_INT(l->phases.n, 1);
    ASSERT_EQ_INT(l->phases.v[0].end_ns - l->phases.v[0].begin_ns, 1999500);
    ASSERT_EQ_STR(gp_tlog_s(l, l->phases.v[0].compile_id), "2/1");
    gp_compile_totals t;
    gp_compile_totals_of(l, &t);
    ASSERT_EQ_INT(t.compiles, 1);
    ASSERT_EQ_INT(t.recompiles, 1);
    ASSERT_EQ_INT(t.graph_breaks, 2);
    gp_tlog_destroy(l);
}

/* each of these envelopes is invalid JSON: skipped, counted, its line kept */
TEST(corrupt_envelopes)
{
    static const char *const bad[] = {"{\"a\": \"tab\tin string\"}",
                                      "{\"a\": \"\\x\"}",
                                      "{\"a\": \"\\u12g4\"}",
                                      "{\"a\": 01}",
                                      "{\"a\": 1.}",
                                      "{\"a\": -}",
                                      "{\"a\": tru}",
                                      "{\"a\": [1,]}",
                                      "{\"a\" 1}",
                                      "{\"a\": 1} x",
                                      "{\"a\": \"open}",
                                      "{\"a\": {\"b\": 1}"};
    size_t nb = sizeof bad / sizeof bad[0];
    char text[4096] = "";
    strcat(text, P "{\"str\": [\"f\", 0]}\n");
    for (size_t i = 0; i < nb; i++) {
        strcat(text, P);
        strcat(text, bad[i]);
        strcat(text, "\n");
    }
    strcat(text, P "{\"str\": [\"g\", 1]}\n");
    gp_err e;
    gp_tlog *l = read_text(text, &e);
    if (!l) GP_FAIL_("read: %s", e.msg);
    ASSERT_EQ_INT(l->corrupt, nb);
    ASSERT_EQ_INT(l->envelopes, 2);
    for (size_t i = 0; i < nb; i++) ASSERT_EQ_INT(l->bad.v[i].line, i + 2);
    gp_tlog_destroy(l);
}

TEST(errors)
{
    gp_err e;
    ASSERT(!read_text("hello\n", &e));
    ASSERT(strstr(e.msg, "not a TORCH_TRACE log"));
    ASSERT(!read_text(P "{\"str\": [\"f\", 0]}\n" P "{\"compilation_metrics\": {\"co_na", &e));
    ASSERT(strstr(e.msg, "t.log:2: truncated"));
    ASSERT(!read_text(
        P "{\"str\": [\"f\", 0]}\n" P "{\"chromium_event\": {}, \"has_payload\": \"h\"}\n", &e));
    ASSERT(strstr(e.msg, "t.log:2: truncated"));
    ASSERT(!read_text(P "{\"str\": [\"f\", 0]}\n" P
                        "{\"chromium_event\": {}, \"has_payload\": \"h\"}\n"
                        "\t{\"name\": \"x\",\n",
                      &e));
    ASSERT(strstr(e.msg, "truncated"));
}

TEST(fused_op_count)
{
    ASSERT_EQ_INT(gp_fused_op_count("triton_poi_fused_add_cos_sin_0"), 3);
    ASSERT_EQ_INT(gp_fused_op_count("triton_per_fused_native_layer_norm_12"), 1);
    ASSERT_EQ_INT(gp_fused_op_count("triton_poi_fused__to_copy_add_mul_3"), 3);
    ASSERT_EQ_INT(gp_fused_op_count("triton_red_fused_sum_0"), 1);
    ASSERT_EQ_INT(gp_fused_op_count("triton_poi_fused_baz_gelu_native_dropout_1"), 3);
    ASSERT_EQ_INT(gp_fused_op_count("sgemm_128x64"), 0);
    ASSERT_EQ_INT(gp_fused_op_count("triton_mm_4"), 0);
    ASSERT_EQ_INT(gp_fused_op_count(NULL), 0);
}

TEST_MAIN(records_and_payloads, corrupt_envelopes, errors, fused_op_count)
