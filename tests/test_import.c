/* tests/test_import.c: the Kineto/Chrome JSON importer: timestamp forms,
 * object/array forms, event kinds, metadata, and bad input. */
#include "test.h"
#include "trace/import.h"
#include "trace/jscan.h"
#include <zlib.h>

static gp_trace *load(const char *json)
{
    gp_err err = {0};
    gp_trace *t = NULL;
    int rc = gp_import_json_mem(json, strlen(json), "mem.json", &t, &err);
    if (rc) fprintf(stderr, "  import failed: %s\n", err.msg);
    return t;
}

static int load_err(const char *json, gp_err *err)
{
    gp_trace *t = NULL;
    int rc = gp_import_json_mem(json, strlen(json), "bad.json", &t, err);
    gp_trace_destroy(t);
    return rc;
}

TEST(us_to_ns_exact)
{
    int64_t v;
    const char *s;
#define NS(str, want)                                                                              \
    s = str;                                                                                       \
    ASSERT_EQ_INT(gp_parse_us_to_ns(s, s + strlen(s), &v, NULL), 0);                               \
    ASSERT_EQ_INT(v, want);
    NS("0", 0);
    NS("1", 1000);
    NS("12.345", 12345);
    NS("12.3", 12300);
    NS("-4.5", -4500);
    NS("4458676522690.655", 4458676522690655LL);       /* relative to a base */
    NS("1669783687464181", 1669783687464181000LL);     /* integer epoch us */
    NS("1712195495519695.8", 1712195495519695800LL);   /* float absolute us */
    NS("1712195495519695.875", 1712195495519695875LL); /* no double could hold this */
    NS("0.0004", 0);                                   /* below half a ns */
    NS("0.0005", 1);                                   /* half away from zero */
    NS("1.2345678", 1235);
    NS("1e3", 1000000);
    NS("1.5E-3", 2); /* 1.5 ns rounds half away from zero */
    NS("2.5e2", 250000);
    ASSERT_EQ_INT(gp_parse_us_to_ns("1e30", "1e30" + 4, &v, NULL), GP_ERANGE);
    ASSERT_EQ_INT(gp_parse_us_to_ns("99999999999999999", "99999999999999999" + 17, &v, NULL),
                  GP_ERANGE);
    ASSERT_EQ_INT(gp_parse_us_to_ns("abc", "abc" + 3, &v, NULL), GP_EPARSE);
    /* the ends of int64 ns: INT64_MIN fits, one more does not */
    NS("-9223372036854775.808", INT64_MIN);
    NS("9223372036854775.807", INT64_MAX);
    NS("-9223372036854775808e-3", INT64_MIN);
    s = "-9223372036854775.809";
    ASSERT_EQ_INT(gp_parse_us_to_ns(s, s + strlen(s), &v, NULL), GP_ERANGE);
    s = "9223372036854775.808";
    ASSERT_EQ_INT(gp_parse_us_to_ns(s, s + strlen(s), &v, NULL), GP_ERANGE);
    ASSERT_EQ_INT(gp_parse_us_to_ns("1.", "1." + 2, &v, NULL), GP_EPARSE);
#undef NS
}

/* The three timestamp forms, each imported and rebased exactly. */
TEST(timestamp_forms)
{
    /* integer epoch microseconds */
    gp_trace *t = load("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\","
                       "\"pid\":1,\"tid\":1,\"ts\":1669783687464181,\"dur\":7},"
                       "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"b\",\"pid\":1,\"tid\":1,"
                       "\"ts\":1669783687464190,\"dur\":3}]}");
    ASSERT(t);
    ASSERT_EQ_INT(t->slices.n, 2);
    ASSERT_EQ_INT(t->slices.v[0].ts, 0);
    ASSERT_EQ_INT(t->slices.v[0].dur, 7000);
    ASSERT_EQ_INT(t->slices.v[1].ts, 9000);
    ASSERT_EQ_INT(t->meta.t0_abs_ns, 1669783687464181000LL);
    ASSERT_EQ_INT(t->meta.fractional_ts, 0);
    gp_trace_destroy(t);

    /* float absolute microseconds with ns digits: t0 floored to a whole us */
    t = load("[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
             "\"ts\":1712195495519695.8,\"dur\":2.113,\"args\":{\"stream\":7,\"device\":0}},"
             "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,"
             "\"ts\":1712195495519699.001,\"dur\":0.999,\"args\":{\"stream\":7}}]");
    ASSERT(t);
    ASSERT_EQ_INT(t->slices.v[0].ts, 800);
    ASSERT_EQ_INT(t->slices.v[0].dur, 2113);
    ASSERT_EQ_INT(t->slices.v[1].ts, 4001);
    ASSERT_EQ_INT(t->slices.v[1].dur, 999);
    ASSERT_EQ_INT(t->meta.t0_abs_ns, 1712195495519695000LL);
    ASSERT_EQ_INT(t->meta.fractional_ts, 1);
    ASSERT_EQ_INT(t->tracks.v[t->slices.v[0].track].type, GP_TRACK_GPU);
    ASSERT_EQ_INT(t->tracks.v[t->slices.v[0].track].stream, 7);
    gp_trace_destroy(t);

    /* relative microseconds + baseTimeNanoseconds given after the events */
    t = load("{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\",\"pid\":1,"
             "\"tid\":1,\"ts\":4458676522690.655,\"dur\":108.515}],"
             "\"baseTimeNanoseconds\":1711964646000000000}");
    ASSERT(t);
    ASSERT_EQ_INT(t->slices.v[0].ts, 655);
    ASSERT_EQ_INT(t->slices.v[0].dur, 108515);
    ASSERT_EQ_INT(t->meta.has_base_time, 1);
    ASSERT_EQ_INT(t->meta.t0_abs_ns, 1711964646000000000LL + 4458676522690000LL);
    gp_trace_destroy(t);
}

TEST(kineto_event_kinds)
{
    const char *j =
        "{\"schemaVersion\":1,\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":3,\"world_size\":"
        "8,"
        "\"pg_config\":[{\"ranks\":[0,1]}]},"
        "\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA A100\",\"numSms\":108,"
        "\"totalGlobalMem\":42297524224}],"
        "\"traceEvents\":["
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":10,\"tid\":11,\"args\":{\"name\":\"main\"}}"
        ","
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":10,\"tid\":0,\"args\":{\"name\":\"py\"}},"
        "{\"name\":\"process_labels\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"labels\":\"GPU "
        "0\"}},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":10,\"tid\":11,\"ts\":100,"
        "\"dur\":50,\"args\":{\"External id\":5}},"
        "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":10,\"tid\":"
        "11,"
        "\"ts\":110,\"dur\":5,\"args\":{\"External id\":5,\"cbid\":211,\"correlation\":77}},"
        "{\"ph\":\"s\",\"id\":77,\"pid\":10,\"tid\":11,\"ts\":110,\"cat\":\"ac2g\",\"name\":"
        "\"ac2g\"},"
        "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":120,\"dur\":"
        "30,"
        "\"args\":{\"External "
        "id\":5,\"device\":0,\"stream\":7,\"correlation\":77,\"grid\":[108,2,1],"
        "\"block\":[256,1,1],\"registers per thread\":64,\"shared memory\":4096,"
        "\"est. achieved occupancy %\":25}},"
        "{\"ph\":\"f\",\"id\":77,\"pid\":0,\"tid\":7,\"ts\":120,\"cat\":\"ac2g\",\"name\":\"ac2g\","
        "\"bp\":\"e\"},"
        "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> "
        "Device)\",\"pid\":0,"
        "\"tid\":7,\"ts\":160,\"dur\":4,\"args\":{\"bytes\":4096,\"stream\":7}},"
        "{\"ph\":\"X\",\"cat\":\"Kernel\",\"name\":\"legacy\",\"pid\":0,\"tid\":7,\"ts\":170,"
        "\"dur\":1},"
        "{\"ph\":\"i\",\"cat\":\"cpu_instant_event\",\"s\":\"t\",\"name\":\"[memory]\",\"pid\":10,"
        "\"tid\":11,\"ts\":105,\"args\":{\"Device Type\":1,\"Device Id\":0,\"Addr\":1234,"
        "\"Bytes\":-512,\"Total Allocated\":1024,\"Total Reserved\":2048}},"
        "{\"ph\":\"C\",\"name\":\"util\",\"pid\":10,\"tid\":11,\"ts\":130,\"args\":{\"gpu\":55.5,"
        "\"mem\":10}},"
        "{\"ph\":\"B\",\"name\":\"outer\",\"cat\":\"user_annotation\",\"pid\":10,\"tid\":11,\"ts\":"
        "200},"
        "{\"ph\":\"B\",\"name\":\"inner\",\"cat\":\"user_annotation\",\"pid\":10,\"tid\":11,\"ts\":"
        "210},"
        "{\"ph\":\"E\",\"pid\":10,\"tid\":11,\"ts\":220},"
        "{\"ph\":\"E\",\"pid\":10,\"tid\":11,\"ts\":230},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"no dur\",\"pid\":10,\"tid\":11,\"ts\":240},"
        "{\"ph\":\"X\",\"cat\":\"Trace\",\"name\":\"PyTorch Profiler (0)\",\"pid\":\"Spans\","
        "\"tid\":\"PyTorch Profiler\",\"ts\":100,\"dur\":140}"
        "]}";
    gp_trace *t = load(j);
    ASSERT(t);
    ASSERT_EQ_INT(t->meta.rank, 3);
    ASSERT_EQ_INT(t->meta.world_size, 8);
    ASSERT_EQ_STR(gp_trace_s(t, t->meta.backend), "nccl");
    ASSERT_EQ_INT(t->devices.n, 1);
    ASSERT_EQ_INT(t->devices.v[0].num_sms, 108);
    ASSERT_EQ_STR(gp_trace_s(t, t->devices.v[0].name), "NVIDIA A100");
    ASSERT_EQ_INT(t->slices.n, 8); /* 5 X with dur + 2 from B/E + Trace span */
    ASSERT_EQ_INT(t->meta.events_dropped_no_dur, 1);
    const gp_slice *k = &t->slices.v[2];
    ASSERT_EQ_STR(gp_trace_s(t, k->name), "gemm");
    ASSERT_EQ_INT(gp_slice_kind(t, k), GP_K_KERNEL);
    ASSERT_EQ_INT(k->correlation, 77);
    ASSERT_EQ_INT(k->external_id, 5);
    ASSERT(k->gpu != GP_NO_INDEX);
    const gp_gpu_info *g = &t->gpu_info.v[k->gpu];
    ASSERT_EQ_INT(g->grid[0], 108);
    ASSERT_EQ_INT(g->grid[1], 2);
    ASSERT_EQ_INT(g->block[0], 256);
    ASSERT_EQ_INT(g->registers, 64);
    ASSERT_EQ_INT(g->shared_mem, 4096);
    ASSERT_NEAR(g->occupancy_pct, 25, 1e-6);
    const gp_gpu_info *m = &t->gpu_info.v[t->slices.v[3].gpu];
    ASSERT_EQ_INT(m->bytes, 4096);
    ASSERT_EQ_INT(m->copy_kind, GP_COPY_HTOD);
    ASSERT_EQ_INT(m->src_kind, 1);
    ASSERT_EQ_INT(m->dst_kind, 3);
    ASSERT_EQ_INT(gp_slice_kind(t, &t->slices.v[4]), GP_K_KERNEL); /* legacy "Kernel" */
    /* B/E pairs nest: inner ends first */
    ASSERT_EQ_STR(gp_trace_s(t, t->slices.v[5].name), "inner");
    ASSERT_EQ_INT(t->slices.v[5].dur, 10000);
    ASSERT_EQ_STR(gp_trace_s(t, t->slices.v[6].name), "outer");
    ASSERT_EQ_INT(t->slices.v[6].dur, 30000);
    ASSERT_EQ_INT(t->flows.n, 2);
    ASSERT_EQ_INT(t->flows.v[0].ph, 's');
    ASSERT_EQ_INT(t->flows.v[1].bind_enclosing, 1);
    ASSERT_EQ_INT(t->mem_events.n, 1);
    ASSERT_EQ_INT(t->mem_events.v[0].bytes, -512);
    ASSERT_EQ_INT(t->mem_events.v[0].total_reserved, 2048);
    ASSERT_EQ_INT(t->counters.n, 2);
    ASSERT_EQ_STR(gp_trace_s(t, t->series.v[t->counters.v[0].series].name), "util.gpu");
    ASSERT_NEAR(t->counters.v[0].value, 55.5, 1e-12);
    const gp_track *cpu = &t->tracks.v[t->slices.v[0].track];
    ASSERT_EQ_STR(gp_trace_s(t, cpu->name), "main");
    ASSERT_EQ_STR(gp_trace_s(t, cpu->process_name), "py");
    ASSERT_EQ_INT(cpu->type, GP_TRACK_CPU);
    const gp_track *span = &t->tracks.v[t->slices.v[7].track];
    ASSERT_EQ_INT(span->type, GP_TRACK_OTHER);
    ASSERT_EQ_STR(gp_trace_s(t, span->pid_str), "Spans");
    ASSERT_EQ_INT(gp_slice_kind(t, &t->slices.v[7]), GP_K_TRACE_SPAN);
    ASSERT_EQ_INT(t->t_begin, 0);
    ASSERT_EQ_INT(t->t_end, 140000); /* ts 240 -> 140 us after t0 = 100 */
    gp_trace_destroy(t);
}

TEST(string_escapes_and_unicode)
{
    gp_trace *t =
        load("[{\"ph\":\"X\",\"name\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\\n\",\"pid\":1,"
             "\"tid\":1,\"ts\":1,\"dur\":1,\"cat\":\"x\",\"extra\":{\"deep\":[1,{\"z\":null}]}}]");
    ASSERT(t);
    ASSERT_EQ_STR(gp_trace_s(t, t->slices.v[0].name), "a\"b\\c\xc3\xa9\xf0\x9f\x98\x80\n");
    gp_trace_destroy(t);
}

/* The model holds no NUL byte inside a string: an escaped U+0000 becomes
 * U+FFFD (as a lone surrogate does), so "a\u0000b" and "a\u0000c" stay two
 * names, and every C string of the model is the whole string. In names,
 * categories, string pids, metadata, argument keys and values read, on the
 * fast and the general path. */
TEST(nul_escape_becomes_replacement)
{
    static const char j[] =
        "{\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\\u0000b\",\"pid\":1,"
        "\"tid\":1,\"ts\":1,\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"a\\u0000c\",\"pid\":1,\"tid\":1,\"ts\":10,"
        "\"dur\":5},"
        "{\"ph\":\"X\",\"cat\":\"c\\u0000\",\"name\":\"\\u0000\",\"pid\":\"p\\u0000q\",\"tid\":1,"
        "\"ts\":10,\"dur\":5,\"args\":{\"k\\u0000\":\"v\\u0000\"}},"
        "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":1,"
        "\"args\":{\"name\":\"t\\u0000\\u0000\"}}],"
        "\"traceName\":\"n\\u0000\",\"distributedInfo\":{\"backend\":\"nc\\u0000cl\"}}";
    for (int fast = 0; fast < 2; fast++) {
        setenv("GPUPROF_IMPORT_FAST", fast ? "1" : "0", 1);
        gp_trace *t = load(j);
        ASSERT(t);
        ASSERT_EQ_INT(t->slices.n, 3);
        ASSERT_EQ_STR(gp_trace_s(t, t->slices.v[0].name), "a\xef\xbf\xbd"
                                                          "b");
        ASSERT_EQ_STR(gp_trace_s(t, t->slices.v[1].name), "a\xef\xbf\xbd"
                                                          "c");
        ASSERT_NE_INT(t->slices.v[0].name, t->slices.v[1].name);
        ASSERT_EQ_STR(gp_trace_s(t, t->slices.v[2].name), "\xef\xbf\xbd");
        ASSERT_EQ_STR(gp_trace_s(t, t->cats.v[t->slices.v[2].cat].name), "c\xef\xbf\xbd");
        ASSERT_EQ_STR(gp_trace_s(t, t->tracks.v[t->slices.v[2].track].pid_str), "p\xef\xbf\xbdq");
        ASSERT_EQ_STR(gp_trace_s(t, t->tracks.v[t->slices.v[0].track].name),
                      "t\xef\xbf\xbd\xef\xbf\xbd");
        ASSERT_EQ_STR(gp_trace_s(t, t->meta.trace_name), "n\xef\xbf\xbd");
        ASSERT_EQ_STR(gp_trace_s(t, t->meta.backend), "nc\xef\xbf\xbd"
                                                      "cl");
        /* no string of the model holds a NUL byte */
        for (uint32_t i = 0; i < gp_strtab_count(t->strings); i++)
            ASSERT_EQ_INT(strlen(gp_strtab_get(t->strings, i)), gp_strtab_len(t->strings, i));
        gp_trace_destroy(t);
    }
    unsetenv("GPUPROF_IMPORT_FAST");
}

TEST(unterminated_array_is_kept)
{
    gp_trace *t = load("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1},\n"
                       "{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1},\n");
    ASSERT(t);
    ASSERT_EQ_INT(t->slices.n, 2);
    ASSERT_EQ_INT(t->meta.unterminated, 1);
    gp_trace_destroy(t);
    t = load("[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}");
    ASSERT(t);
    ASSERT_EQ_INT(t->slices.n, 1);
    gp_trace_destroy(t);
}

TEST(gzip_input)
{
    const char *j = "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"z\",\"pid\":1,\"tid\":1,\"ts\":5,"
                    "\"dur\":2}]}";
    unsigned char out[512];
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    ASSERT_EQ_INT(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (unsigned char *)j;
    zs.avail_in = (uInt)strlen(j);
    zs.next_out = out;
    zs.avail_out = sizeof out;
    ASSERT_EQ_INT(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t n = sizeof out - zs.avail_out;
    deflateEnd(&zs);
    gp_err err = {0};
    gp_trace *t = NULL;
    ASSERT_EQ_INT(gp_import_json_mem(out, n, "z.json.gz", &t, &err), 0);
    ASSERT_EQ_INT(t->slices.n, 1);
    ASSERT_EQ_INT(t->slices.v[0].dur, 2000);
    gp_trace_destroy(t);
    /* truncated gzip stream */
    ASSERT_EQ_INT(gp_import_json_mem(out, n / 2, "z.json.gz", &t, &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "z.json.gz");
}

TEST(bad_input_messages)
{
    gp_err err;
    ASSERT_EQ_INT(load_err("", &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "bad.json:1:1: unexpected end of file");
    ASSERT_EQ_INT(load_err("hello", &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "bad.json:1:1: expected '{' or '['");
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[\n{\"ph\":\"X\",\"ts\":\"abc\"}]}", &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "bad.json:2:16: expected a number for \"ts\"");
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":-5}]}", &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "negative \"dur\"");
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1e40,\"dur\":1}]}", &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "out of range");
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":9000000000000000,"
                           "\"dur\":9000000000000000}]}",
                           &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "out of range");
    /* times that each fit int64 ns but not as differences from the trace
     * start (t0, the earliest floored to a microsecond) are refused, never
     * wrapped; INT64_MIN ns itself is read (an ignored async event) */
    ASSERT_EQ_INT(load_err("[{\"ph\":\"X\",\"ts\":-9223372036854775.807,\"dur\":1}]", &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "bad.json: the times (from -9223372036854775807 to "
                             "-9223372036854774807 ns) do not fit int64 nanoseconds");
    ASSERT_EQ_INT(load_err("[{\"ph\":\"i\",\"ts\":-9223372036854775},"
                           "{\"ph\":\"C\",\"name\":\"c\",\"ts\":9223372036854775,"
                           "\"args\":{\"v\":1}}]",
                           &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "do not fit int64 nanoseconds from the trace start");
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":-9223372036854775,\"dur\":1}],"
                           "\"baseTimeNanoseconds\":-9000}",
                           &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "baseTimeNanoseconds -9000 plus the earliest time");
    ASSERT_EQ_INT(load_err("[{\"ph\":\"B\",\"ts\":-9000000000000000},\n"
                           "{\"ph\":\"E\",\"ts\":9000000000000000}]",
                           &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "bad.json:2:1: \"E\" event out of range of its \"B\"");
    ASSERT_EQ_INT(load_err("[{\"ph\":\"b\",\"id\":1,\"ts\":-9223372036854775.808},"
                           "{\"ph\":\"X\",\"ts\":-9223372036854775,\"dur\":1}]",
                           &err),
                  0);
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[1,2]}", &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "expected an event object");
    ASSERT_EQ_INT(load_err("{\"traceEvents\":{}}", &err), GP_EPARSE);
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[{\"ph\":5}]}", &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "expected a string for \"ph\"");
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\x01\"}]}", &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "control character");
    ASSERT_EQ_INT(load_err("{\"traceEvents\":[]} x", &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "bad.json:1:20: found 'x' after the end of the trace");
    static const char nul_after[] = "{\"traceEvents\":[]} \0";
    gp_trace *tn = NULL;
    ASSERT_EQ_INT(gp_import_json_mem(nul_after, sizeof nul_after - 1, "bad.json", &tn, &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "bad.json:1:20: found a NUL byte after the end of the trace");
    ASSERT_EQ_INT(
        load_err("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":tru}]}", &err),
        GP_EPARSE);
    ASSERT_EQ_INT(load_err("[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"args\":{\"a\":\"\\q\"}}]", &err),
                  GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "invalid escape");
    /* deep nesting is refused, not a stack overflow */
    char deep[4000];
    strcpy(deep, "[{\"ph\":\"X\",\"x\":");
    size_t n = strlen(deep);
    for (int i = 0; i < 1500; i++) deep[n++] = '[';
    deep[n] = 0;
    ASSERT_EQ_INT(load_err(deep, &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "nesting deeper");
    /* NUL byte inside the text */
    char nul[] = "[{\"ph\":\"X\"\0,\"ts\":1}]";
    gp_trace *t = NULL;
    ASSERT_EQ_INT(gp_import_json_mem(nul, sizeof nul - 1, "nul.json", &t, &err), GP_EPARSE);
    ASSERT_CONTAINS(err.msg, "NUL byte");
}

/* Every truncation of an object-form trace is an error with a position;
 * nothing crashes or hangs. */
TEST(truncated_at_every_offset)
{
    const char *j = "{\"schemaVersion\":1,\"traceEvents\":[\n"
                    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\\u0041\",\"pid\":0,\"tid\":7,"
                    "\"ts\":12.5,\"dur\":3,\"args\":{\"grid\":[1,2,3],\"stream\":7}},\n"
                    "{\"ph\":\"i\",\"name\":\"[memory]\",\"pid\":1,\"tid\":1,\"ts\":13,"
                    "\"args\":{\"Bytes\":64}}\n],\"baseTimeNanoseconds\":1000,"
                    "\"deviceProperties\":[{\"id\":0,\"name\":\"x\"}]}";
    size_t n = strlen(j);
    gp_trace *t = NULL;
    gp_err err;
    ASSERT_EQ_INT(gp_import_json_mem(j, n, "full.json", &t, &err), 0);
    ASSERT_EQ_INT(t->slices.n, 1);
    gp_trace_destroy(t);
    for (size_t cut = 0; cut < n; cut++) {
        int rc = gp_import_json_mem(j, cut, "cut.json", &t, &err);
        if (rc != GP_EPARSE) {
            fprintf(stderr, "  cut at %zu: rc %d\n", cut, rc);
            ASSERT_EQ_INT(rc, GP_EPARSE);
        }
        ASSERT(t == NULL);
        ASSERT(strncmp(err.msg, "cut.json:", 9) == 0);
        ASSERT(strchr(err.msg, '\n') == NULL);
    }
}

TEST(fixture_files)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/small_kineto.json", GP_TEST_DATA);
    gp_err err = {0};
    gp_trace *t = NULL;
    ASSERT_EQ_INT(gp_import_json_file(path, NULL, &t, &err), 0);
    ASSERT_CMP_INT(t->slices.n, >, 10);
    gp_trace_destroy(t);
    ASSERT_EQ_INT(gp_import_json_file("/nonexistent/x.json", NULL, &t, &err), GP_ENOTFOUND);
    ASSERT_CONTAINS(err.msg, "/nonexistent/x.json");
}

/* Units larger than the initial 4 MiB buffer (one huge event) still parse. */
TEST(huge_event)
{
    size_t big = 9u << 20;
    char *j = malloc(big + 200);
    size_t n = (size_t)sprintf(j, "[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"name\":\"");
    memset(j + n, 'a', big);
    n += big;
    n += (size_t)sprintf(j + n, "\"}]");
    gp_err err = {0};
    gp_trace *t = NULL;
    ASSERT_EQ_INT(gp_import_json_mem(j, n, "big.json", &t, &err), 0);
    ASSERT_EQ_INT(gp_strtab_len(t->strings, t->slices.v[0].name), big);
    gp_trace_destroy(t);
    free(j);
}

/* The "gpuprof" section of gp_export_json files: tracked buffers; elements
 * that are not objects are skipped. */
TEST(gpuprof_export_section)
{
    gp_trace *t = load("{\"traceEvents\":[],\"gpuprof\":{\"version\":\"0.1\",\"memory\":{"
                       "\"current_bytes\":5,\"peak_bytes\":9,\"buffers\":[7,{\"name\":\"w\","
                       "\"dtype\":\"f32\",\"bytes\":4},\"x\",[1],{\"name\":\"b\",\"bytes\":2}]},"
                       "\"other\":{\"buffers\":[1]}}}");
    ASSERT(t);
    ASSERT_EQ_INT(t->meta.has_tracked_memory, 1);
    ASSERT_EQ_INT(t->meta.tracked_peak_bytes, 9);
    ASSERT_EQ_INT(t->meta.tracked_current_bytes, 5);
    ASSERT_EQ_INT(t->tracked_buffers.n, 2);
    ASSERT_EQ_STR(gp_trace_s(t, t->tracked_buffers.v[0].name), "w");
    ASSERT_EQ_STR(gp_trace_s(t, t->tracked_buffers.v[0].dtype), "f32");
    ASSERT_EQ_INT(t->tracked_buffers.v[1].bytes, 2);
    gp_trace_destroy(t);
}

/* The importer's fast paths (issue 19: digits 8 at a time, argument keys by
 * index, floats by one division, names through a cache) give what the
 * general definitions give: integers of every length 1-18 in every integer
 * field, floats of 1-20 digits as strtod reads them, the last of duplicate
 * argument keys, keys written with escapes, and names that share their
 * length and first and last 8 bytes (the name cache's index). */
TEST(fast_paths_match_general)
{
    uint64_t seed = 0x19e5d2u;
    size_t cap = 1 << 22, n = 0;
    char *j = malloc(cap);
    ASSERT(j);
    enum { NEV = 3000 };
    int64_t *want_ext = malloc(NEV * sizeof *want_ext), *want_ts = malloc(NEV * sizeof *want_ts);
    int64_t *want_dur = malloc(NEV * sizeof *want_dur), *want_pid = malloc(NEV * sizeof *want_pid);
    float *want_occ = malloc(NEV * sizeof *want_occ);
    char(*want_name)[40] = malloc(NEV * sizeof *want_name);
    ASSERT(want_ext && want_ts && want_dur && want_pid && want_occ && want_name);
    n += (size_t)snprintf(j + n, cap - n, "{\"traceEvents\":[");
    for (int i = 0; i < NEV; i++) {
        /* an integer of 1-18 digits (the last ones of the range included) */
        char ext[24], occ[32], ts[32], dur[24], pid[24];
        int nd = 1 + i % 18;
        ext[0] = (char)('1' + gp_test_xorshift(&seed) % 9);
        for (int k = 1; k < nd; k++) ext[k] = (char)('0' + gp_test_xorshift(&seed) % 10);
        ext[nd] = 0;
        want_ext[i] = strtoll(ext, NULL, 10);
        /* ts: 1-15 integer digits and 0-6 fraction digits */
        int ti = 1 + (i / 3) % 15, tf = (i / 7) % 7, q = 0;
        for (int k = 0; k < ti; k++) /* no leading zero (JSON) */
            ts[q++] = (char)((k == 0 && ti > 1 ? '1' : '0') +
                             gp_test_xorshift(&seed) % (k == 0 && ti > 1 ? 9 : 10));
        if (tf) ts[q++] = '.';
        for (int k = 0; k < tf; k++) ts[q++] = (char)('0' + gp_test_xorshift(&seed) % 10);
        ts[q] = 0;
        ASSERT_EQ_INT(gp_parse_us_to_ns(ts, ts + q, &want_ts[i], NULL), 0);
        snprintf(dur, sizeof dur, "%llu", (unsigned long long)(gp_test_xorshift(&seed) % 100000));
        want_dur[i] = strtoll(dur, NULL, 10) * 1000;
        snprintf(pid, sizeof pid, "%llu",
                 (unsigned long long)(gp_test_xorshift(&seed) >> (i % 40 + 24)));
        want_pid[i] = strtoll(pid, NULL, 10);
        /* a float of 1-20 digits, point anywhere (or none) */
        int od = 1 + i % 20, pt = (int)(gp_test_xorshift(&seed) % (unsigned)(od + 1));
        q = 0;
        int lead = pt != 1 && od > 1; /* an integer part of 2+ digits: no leading zero */
        for (int k = 0; k < od; k++) {
            if (k == pt && k) occ[q++] = '.';
            occ[q++] = (char)((k == 0 && lead ? '1' : '0') +
                              gp_test_xorshift(&seed) % (k == 0 && lead ? 9 : 10));
        }
        occ[q] = 0;
        want_occ[i] = (float)strtod(occ, NULL);
        if (want_occ[i] == 0.0f) want_occ[i] = NAN;
        /* names: 24 bytes, the same first and last 8 for all, the middle
         * differs; a few hundred distinct, repeated */
        snprintf(want_name[i], sizeof want_name[i], "kernel::%08d::ABCDEFGH",
                 (int)(gp_test_xorshift(&seed) % 700));
        /* every other event writes its keys with escapes, a duplicate
         * argument key before the last (the last one given wins) */
        int esc = i % 2;
        n += (size_t)snprintf(
            j + n, cap - n,
            "%s{\"ph\":\"X\",\"cat\":\"kernel\",\"%s\":\"%s\",\"pid\":%s,\"tid\":7,"
            "\"ts\":%s,\"%s\":%s,\"args\":{\"External id\":1,\"%s\":%s,"
            "\"est. achieved occupancy %%\":%s,\"co\\u0072relation\":%d}}",
            i ? "," : "", esc ? "n\\u0061me" : "name", want_name[i], pid, ts,
            esc ? "d\\u0075r" : "dur", dur, esc ? "Ext\\u0065rnal id" : "External id", ext, occ, i);
        ASSERT(n < cap - 512);
    }
    n += (size_t)snprintf(j + n, cap - n, "]}");
    gp_trace *t = load(j);
    ASSERT(t);
    ASSERT_EQ_INT(t->slices.n, NEV);
    for (int i = 0; i < NEV; i++) {
        const gp_slice *sl = &t->slices.v[i];
        ASSERT_EQ_INT(sl->external_id, want_ext[i]);
        ASSERT_EQ_INT(sl->correlation, i);
        /* times are rebased on t0: compare the differences to the first */
        ASSERT_EQ_INT(sl->ts - t->slices.v[0].ts, want_ts[i] - want_ts[0]);
        ASSERT_EQ_INT(sl->dur, want_dur[i]);
        ASSERT_EQ_INT(t->tracks.v[sl->track].pid, want_pid[i]);
        ASSERT_EQ_STR(gp_trace_s(t, sl->name), want_name[i]);
        float occ = t->gpu_info.v[sl->gpu].occupancy_pct;
        if (isnan(want_occ[i]))
            ASSERT(isnan(occ));
        else
            ASSERT(occ == want_occ[i]);
    }
    gp_trace_destroy(t);
    free(j);
    free(want_ext);
    free(want_ts);
    free(want_dur);
    free(want_pid);
    free(want_occ);
    free(want_name);
}

/* The template with '@' replaced by num; *col: the column of the '@'. */
static char *with_number(const char *tmpl, const char *num, int *col)
{
    const char *at = strchr(tmpl, '@');
    size_t n = strlen(tmpl) + strlen(num);
    char *j = malloc(n + 1);
    snprintf(j, n + 1, "%.*s%s%s", (int)(at - tmpl), tmpl, num, at + 1);
    *col = (int)(at - tmpl) + 1;
    return j;
}

/* JSON numbers have no leading zero ("01", "-01", "00.5"; "0", "-0", "0.5",
 * "0e5" are numbers): refused wherever a number may stand, by the fast
 * paths and the general one, on every scanning path, with the line and
 * column of the number. */
TEST(leading_zeros_refused)
{
    static const char *const tmpl[] = {
        /* the fast_kineto shapes */
        "{\"traceEvents\":[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, "
        "\"tid\": 2, \"ts\": @, \"dur\": 1}]}",
        "{\"traceEvents\":[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, "
        "\"tid\": 2, \"ts\": 1, \"dur\": @}]}",
        "{\"traceEvents\":[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, "
        "\"tid\": 2, \"ts\": 1, \"dur\": 1, \"args\": {\"x\": @}}]}",
        "{\"traceEvents\":[{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"a\", \"pid\": 1, "
        "\"tid\": 2, \"ts\": 1, \"dur\": 1, \"args\": {\"grid\": [1, @, 1]}}]}",
        /* any key order (fast_event) */
        "[{\"ts\":@,\"ph\":\"X\",\"name\":\"a\",\"dur\":1}]",
        "[{\"dur\":@,\"ph\":\"X\",\"name\":\"a\",\"ts\":1}]",
        "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"args\":{\"External id\":@}}]",
        /* the general path only: an unknown key, nested args, top-level keys */
        "[{\"ph\":\"X\",\"other\":@,\"name\":\"a\",\"ts\":1,\"dur\":1}]",
        "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"args\":{\"x\":{\"y\":[true,@]}}}]",
        "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1,\"args\":{\"x\\u0031\":@}}]",
        "{\"schemaVersion\":1,\"traceEvents\":[],\"other\":[@]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1}],\"gpuprof\":{\"x\":@}}",
    };
    static const char *const id_tmpl[] = {
        /* integers only */
        "{\"traceEvents\":[{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": @, "
        "\"tid\": 2, \"ts\": 1, \"dur\": 1}]}",
        "[{\"ph\":\"f\",\"id\":@,\"pid\":1,\"tid\":2,\"ts\":1,\"cat\":\"ac2g\",\"name\":\"n\"}]",
        "[{\"tid\":@,\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1}]",
        "{\"schemaVersion\":@,\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1}]}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1}],\"baseTimeNanoseconds\":@}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1}],\"distributedInfo\":{\"rank\":@}}",
        "{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1}],\"gpuprof\":{\"memory\":"
        "{\"current_bytes\":@}}}",
    };
    static const char *const bad[] = {
        "01", "00", "-01", "-00", "00.5", "-012.5", "007", "01e3", "0123456789012345678901234"};
    static const char *const good[] = {"0", "-0", "0.5", "0e5", "-0.0", "0E-2", "10", "100.5"};
    static const char *const good_int[] = {"0", "-0", "10", "7"};
    int checked = 0;
    for (int fast = 0; fast < 2; fast++)
        for (int isa = GP_JSCAN_OFF; isa < GP_JSCAN_COUNT; isa++) {
            if (!gp_jscan_supported((gp_jscan_isa)isa)) continue;
            setenv("GPUPROF_IMPORT_FAST", fast ? "1" : "0", 1);
            setenv("GPUPROF_SIMD", gp_jscan_name((gp_jscan_isa)isa), 1);
            for (int set = 0; set < 2; set++) {
                const char *const *tm = set ? id_tmpl : tmpl;
                size_t ntm = set ? sizeof id_tmpl / sizeof *id_tmpl : sizeof tmpl / sizeof *tmpl;
                for (size_t k = 0; k < ntm; k++) {
                    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
                        int col;
                        char *j = with_number(tm[k], bad[b], &col), want[64];
                        gp_err err;
                        snprintf(want, sizeof want, "bad.json:1:%d: malformed number: leading zero",
                                 col);
                        if (load_err(j, &err) != GP_EPARSE || !strstr(err.msg, want))
                            fprintf(stderr, "  fast %d %s: %s\n  -> %s\n", fast,
                                    gp_jscan_name((gp_jscan_isa)isa), j, err.msg);
                        ASSERT_CONTAINS(err.msg, want);
                        free(j);
                        checked++;
                    }
                    const char *const *ok = set ? good_int : good;
                    size_t nok =
                        set ? sizeof good_int / sizeof *good_int : sizeof good / sizeof *good;
                    for (size_t g = 0; g < nok; g++) {
                        int col;
                        char *j = with_number(tm[k], ok[g], &col);
                        gp_err err;
                        int rc = load_err(j, &err);
                        if (rc) fprintf(stderr, "  %s\n  -> %s\n", j, err.msg);
                        ASSERT_EQ_INT(rc, 0);
                        free(j);
                    }
                }
            }
        }
    unsetenv("GPUPROF_IMPORT_FAST");
    unsetenv("GPUPROF_SIMD");
    ASSERT_CMP_INT(checked, >, 0);
    /* the values read are the numbers' (the fast paths read "0.5" and "-0") */
    gp_trace *t = load("[{\"ph\":\"X\",\"name\":\"a\",\"ts\":0.5,\"dur\":-0},"
                       "{\"ph\":\"X\",\"name\":\"b\",\"ts\":-0,\"dur\":0e5}]");
    ASSERT(t);
    ASSERT_EQ_INT(t->slices.n, 2);
    ASSERT_EQ_INT(t->slices.v[0].ts - t->slices.v[1].ts, 500);
    ASSERT_EQ_INT(t->slices.v[0].dur, 0);
    gp_trace_destroy(t);
}

/* A key given twice in "args" reads as its last value, as a key given twice
 * in the event does ("dur") and as Python's json (HTA) reads both: a kernel's
 * stream, device and correlation once came from the first, on the fast and
 * the general path. */
TEST(duplicate_arg_key_last_wins)
{
    static const char j[] =
        "[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":1,"
        "\"dur\":2,\"dur\":5,\"args\":{\"device\":0,\"stream\":7,\"correlation\":3,"
        "\"stream\":21,\"device\":1,\"correlation\":4}}]";
    for (int fast = 0; fast < 2; fast++) {
        setenv("GPUPROF_IMPORT_FAST", fast ? "1" : "0", 1);
        gp_trace *t = load(j);
        ASSERT(t);
        ASSERT_EQ_INT(t->slices.n, 1);
        const gp_slice *sl = &t->slices.v[0];
        ASSERT_EQ_INT(sl->dur, 5000);
        ASSERT_EQ_INT(sl->correlation, 4);
        ASSERT(sl->gpu != GP_NO_INDEX);
        ASSERT_EQ_INT(t->gpu_info.v[sl->gpu].stream, 21);
        ASSERT_EQ_INT(t->gpu_info.v[sl->gpu].device, 1);
        gp_trace_destroy(t);
    }
    unsetenv("GPUPROF_IMPORT_FAST");
}

TEST_MAIN(us_to_ns_exact, timestamp_forms, kineto_event_kinds, string_escapes_and_unicode,
          unterminated_array_is_kept, gzip_input, bad_input_messages, truncated_at_every_offset,
          fixture_files, huge_event, gpuprof_export_section, fast_paths_match_general,
          leading_zeros_refused, nul_escape_becomes_replacement, duplicate_arg_key_last_wins)
