/* report/runs.c: the result writers of `gpuprof runs`. */
#include "report/runs.h"
#include "core/table.h"
#include "trace/trace.h"
#include <string.h>
#include <time.h>

void gp_report_runs_json(gp_sbuf *b, const char *path, const gp_store_run_row *rows, size_t n)
{
    gp_sbuf_puts(b, "{\"store\":");
    gp_json_str(b, path);
    gp_sbuf_puts(b, ",\"runs\":[");
    for (size_t i = 0; i < n; i++) {
        const gp_store_run_row *r = &rows[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        gp_json_key(b, "id", 0);
        gp_json_int(b, r->id);
        const char *nk[] = {"start_unix_ns", "duration_ns", "exit_status",
                            "events",        "dropped",     "processes"};
        int64_t nv[] = {r->start_wall_ns, r->duration_ns, r->exit_status,
                        r->events,        r->dropped,     r->processes};
        for (int k = 0; k < 6; k++) {
            gp_json_key(b, nk[k], 1);
            if (nv[k] == GP_NONE)
                gp_sbuf_puts(b, "null");
            else
                gp_json_int(b, nv[k]);
        }
        gp_json_key(b, "state", 1);
        gp_json_str(b, gp_run_state_name(gp_store_run_state(r)));
        gp_json_key(b, "command", 1);
        gp_json_str(b, r->command);
        gp_json_key(b, "host", 1);
        gp_json_str(b, r->host);
        gp_json_key(b, "devices", 1);
        gp_json_str(b, r->devices);
        gp_json_key(b, "version", 1);
        gp_json_str(b, r->version);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]}\n");
}

void gp_report_runs_text(FILE *f, const gp_store_run_row *rows, size_t n)
{
    const char *hd[] = {"ID",      "Start", "Duration", "Exit",   "Events",
                        "Dropped", "Procs", "Devices",  "Command"};
    gp_table *tb = gp_table_create(9, hd, "rllrrrrll");
    for (size_t i = 0; i < n; i++) {
        const gp_store_run_row *r = &rows[i];
        char c0[32], c1[32], c2[32], c3[32], c4[32], c5[32], c6[32];
        snprintf(c0, sizeof c0, "%lld", (long long)r->id);
        time_t tt = (time_t)(r->start_wall_ns / 1000000000);
        struct tm tmv;
        localtime_r(&tt, &tmv);
        strftime(c1, sizeof c1, "%Y-%m-%d %H:%M:%S", &tmv);
        if (r->duration_ns == GP_NONE)
            snprintf(c2, sizeof c2, "N/A");
        else
            gp_fmt_dur_auto(c2, sizeof c2, (double)r->duration_ns);
        gp_run_state rs = gp_store_run_state(r);
        if (r->exit_status == GP_NONE)
            snprintf(c3, sizeof c3, "%s", gp_run_state_name(rs));
        else if (r->exit_status < 0)
            snprintf(c3, sizeof c3, "signal %lld", -(long long)r->exit_status);
        else
            snprintf(c3, sizeof c3, "%lld", (long long)r->exit_status);
        if (rs == GP_RUN_INCOMPLETE) /* finished, but events were lost */
            snprintf(c3 + strlen(c3), sizeof c3 - strlen(c3), " %s", gp_run_state_name(rs));
        snprintf(c4, sizeof c4, "%lld", (long long)(r->events == GP_NONE ? 0 : r->events));
        snprintf(c5, sizeof c5, "%lld", (long long)(r->dropped == GP_NONE ? 0 : r->dropped));
        snprintf(c6, sizeof c6, "%lld", (long long)r->processes);
        const char *cells[] = {c0, c1, c2, c3, c4, c5, c6, r->devices, r->command};
        gp_table_row(tb, cells);
    }
    gp_table_print(tb, f, 60);
    gp_table_destroy(tb);
}
