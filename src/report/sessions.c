/* report/sessions.c: the result writers of `gpuprof session list` and
 * `gpuprof session show` (shared by the CLI and the server). */
#include "report/sessions.h"
#include "core/table.h"
#include <stdio.h>
#include <time.h>

void gp_report_sessions_json(gp_sbuf *b, const gp_session_entry *s, size_t n)
{
    gp_sbuf_puts(b, "{\"sessions\":[");
    for (size_t i = 0; i < n; i++) {
        gp_sbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        gp_json_str(b, s[i].name);
        if (s[i].running) { /* counts are in the report written at stop */
            gp_sbuf_puts(b, ",\"state\":\"running\",\"samples\":null,\"snapshots\":null,"
                            "\"inferences\":null,\"duration_s\":");
            if (s[i].duration_s >= 0)
                gp_json_num(b, s[i].duration_s);
            else
                gp_sbuf_puts(b, "null");
            gp_sbuf_putc(b, '}');
            continue;
        }
        gp_sbuf_printf(b,
                       ",\"state\":\"finished\",\"samples\":%lld,\"snapshots\":%lld,"
                       "\"inferences\":%lld,\"duration_s\":",
                       s[i].samples, s[i].snapshots, s[i].inferences);
        gp_json_num(b, s[i].duration_s);
        gp_json_key(b, "report", 1);
        gp_json_str(b, s[i].report);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}\n");
}

void gp_report_sessions_text(FILE *f, const char *dir, const gp_session_entry *s, size_t n)
{
    if (n == 0) {
        fprintf(f, "no sessions in %s\n", dir);
        return;
    }
    const char *hdr[] = {"Session", "State", "Samples", "Snapshots", "Inferences", "Duration (s)"};
    gp_table *t = gp_table_create(6, hdr, "llrrrr");
    for (size_t i = 0; i < n; i++) {
        if (s[i].running && s[i].duration_s >= 0) /* counts: N/A until the session stops */
            gp_table_rowf(t, "%s\trunning\tN/A\tN/A\tN/A\t%.1f so far", s[i].name, s[i].duration_s);
        else if (s[i].running)
            gp_table_rowf(t, "%s\trunning\tN/A\tN/A\tN/A\tN/A", s[i].name);
        else
            gp_table_rowf(t, "%s\tfinished\t%lld\t%lld\t%lld\t%.1f", s[i].name, s[i].samples,
                          s[i].snapshots, s[i].inferences, s[i].duration_s);
    }
    gp_table_print(t, f, 0);
    gp_table_destroy(t);
}

static const char *num_or_na(char *buf, size_t n, const char *fmt, const gp_jv *v)
{
    double d;
    if (!gp_jdom_num(v, &d)) return "N/A";
    snprintf(buf, n, fmt, d);
    return buf;
}

/* A field statistic of a device in the report ("fields":{key:{avg,min,max}}). */
static const gp_jv *dev_stat(const gp_jv *dev, const char *key, const char *which)
{
    return gp_jdom_get(gp_jdom_get(gp_jdom_get(dev, "fields"), key), which);
}

static void fmt_wall(char *buf, size_t n, const gp_jv *v)
{
    double ns;
    if (!gp_jdom_num(v, &ns)) {
        snprintf(buf, n, "N/A");
        return;
    }
    time_t t = (time_t)(ns / 1e9);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/* Prints the readable summary of a session report. */
void gp_report_session_text(FILE *o, const gp_jv *r, const char *path)
{
    char a[64], b[64], c[64], d[64], e[64];
    const gp_jv *tot = gp_jdom_get(r, "totals");
    fprintf(o, "Session %s", gp_jdom_str(gp_jdom_get(r, "session"), "?"));
    const char *desc = gp_jdom_str(gp_jdom_get(r, "description"), "");
    if (desc[0]) fprintf(o, ": %s", desc);
    const gp_jv *act = gp_jdom_get(r, "active");
    fprintf(o, "%s\n", act && act->type == GP_JBOOL && act->boolean ? " (running)" : "");
    fmt_wall(a, sizeof a, gp_jdom_get(r, "start_wall_ns"));
    fmt_wall(b, sizeof b, gp_jdom_get(r, "stop_wall_ns"));
    fprintf(o, "  from %s to %s (%s s)\n", a, b,
            num_or_na(c, sizeof c, "%.1f", gp_jdom_get(r, "duration_s")));
    fprintf(o, "  samples %s, GPUs %s, snapshots %s (%s dropped), inferences %s\n",
            num_or_na(a, sizeof a, "%.0f", gp_jdom_get(tot, "samples")),
            num_or_na(b, sizeof b, "%.0f", gp_jdom_get(tot, "gpus")),
            num_or_na(c, sizeof c, "%.0f", gp_jdom_get(tot, "snapshots")),
            num_or_na(d, sizeof d, "%.0f", gp_jdom_get(tot, "snapshots_dropped")),
            num_or_na(e, sizeof e, "%.0f", gp_jdom_get(tot, "inference_count")));
    double pm;
    if (gp_jdom_num(gp_jdom_get(tot, "peak_memory_used_bytes"), &pm))
        gp_fmt_bytes(d, sizeof d, pm);
    else
        snprintf(d, sizeof d, "N/A");
    fprintf(o,
            "  GPU utilization avg %s %%, max temperature %s C, energy %s J, peak memory used %s\n",
            num_or_na(a, sizeof a, "%.1f", gp_jdom_get(gp_jdom_get(r, "averages"), "gpu_util_pct")),
            num_or_na(b, sizeof b, "%.0f", gp_jdom_get(r, "max_temperature_c")),
            num_or_na(c, sizeof c, "%.0f", gp_jdom_get(tot, "energy_j")), d);

    const gp_jv *devs = gp_jdom_get(r, "devices");
    if (devs && devs->type == GP_JARR && devs->n) {
        const char *hdr[] = {"#",          "Device",     "Backend",     "Kind",
                             "Samples",    "Util avg %", "Util max %",  "Mem peak",
                             "Mem peak %", "Temp max C", "Power avg W", "Power max W"};
        gp_table *t = gp_table_create(12, hdr, "rlllrrrrrrrr");
        for (size_t i = 0; i < devs->n; i++) {
            const gp_jv *dv = &devs->items[i];
            char cells[12][64];
            const char *cp[12];
            snprintf(cells[0], 64, "%s", num_or_na(a, sizeof a, "%.0f", gp_jdom_get(dv, "index")));
            snprintf(cells[1], 64, "%s", gp_jdom_str(gp_jdom_get(dv, "name"), "?"));
            snprintf(cells[2], 64, "%s", gp_jdom_str(gp_jdom_get(dv, "backend"), "?"));
            snprintf(cells[3], 64, "%s", gp_jdom_str(gp_jdom_get(dv, "kind"), "?"));
            snprintf(cells[4], 64, "%s",
                     num_or_na(a, sizeof a, "%.0f", gp_jdom_get(dv, "samples")));
            snprintf(cells[5], 64, "%s",
                     num_or_na(a, sizeof a, "%.1f", dev_stat(dv, "util_pct", "avg")));
            snprintf(cells[6], 64, "%s",
                     num_or_na(a, sizeof a, "%.0f", dev_stat(dv, "util_pct", "max")));
            double mb;
            if (gp_jdom_num(dev_stat(dv, "mem_used_bytes", "max"), &mb))
                gp_fmt_bytes(cells[7], 64, mb);
            else
                snprintf(cells[7], 64, "N/A");
            snprintf(cells[8], 64, "%s",
                     num_or_na(a, sizeof a, "%.0f", gp_jdom_get(dv, "peak_mem_pct")));
            snprintf(cells[9], 64, "%s",
                     num_or_na(a, sizeof a, "%.0f", dev_stat(dv, "temp_c", "max")));
            snprintf(cells[10], 64, "%s",
                     num_or_na(a, sizeof a, "%.1f", dev_stat(dv, "power_w", "avg")));
            snprintf(cells[11], 64, "%s",
                     num_or_na(a, sizeof a, "%.1f", dev_stat(dv, "power_w", "max")));
            for (int k = 0; k < 12; k++) cp[k] = cells[k];
            gp_table_row(t, cp);
        }
        fprintf(o, "\nDevices\n");
        gp_table_print(t, o, 40);
        gp_table_destroy(t);
    }

    const gp_jv *inf = gp_jdom_get(r, "inference");
    double ninf = 0;
    if (gp_jdom_num(gp_jdom_get(inf, "count"), &ninf) && ninf > 0) {
        fprintf(o, "\nInference latency (ms): count %.0f, mean %s, p50 %s, p95 %s, p99 %s", ninf,
                num_or_na(a, sizeof a, "%.2f", gp_jdom_get(inf, "mean_ms")),
                num_or_na(b, sizeof b, "%.2f", gp_jdom_get(inf, "p50_ms")),
                num_or_na(c, sizeof c, "%.2f", gp_jdom_get(inf, "p95_ms")),
                num_or_na(d, sizeof d, "%.2f", gp_jdom_get(inf, "p99_ms")));
        fprintf(o, ", max %s\n", num_or_na(a, sizeof a, "%.2f", gp_jdom_get(inf, "max_ms")));
    }

    const gp_jv *al = gp_jdom_get(r, "alerts");
    fprintf(o, "\nAlerts:");
    int nal = 0;
    for (size_t i = 0; al && al->type == GP_JOBJ && i < al->n; i++) {
        double k;
        if (!gp_jdom_num(&al->items[i], &k) || k <= 0) continue;
        fprintf(o, "%s %s %.0f", nal++ ? "," : "", al->keys[i], k);
    }
    fprintf(o, "%s\n", nal ? "" : " none");

    const gp_jv *sug = gp_jdom_get(r, "suggestions");
    fprintf(o, "\nSuggestions:%s\n", sug && sug->type == GP_JARR && sug->n ? "" : " none");
    for (size_t i = 0; sug && sug->type == GP_JARR && i < sug->n; i++)
        fprintf(o, "  - [%s] %s\n", gp_jdom_str(gp_jdom_get(&sug->items[i], "kind"), "?"),
                gp_jdom_str(gp_jdom_get(&sug->items[i], "message"), ""));
    fprintf(o, "\nReport: %s (the full JSON with --json)\n", path);
}
