/* bench/bench_store.c: a bench run kept in the run store like any recorded
 * run (runs row, a "bench" process, its devices, one counter track per
 * device and every sample as a counter value), and the baseline lookup of
 * `gpuprof health --bench`. No table of its own: history and compare read
 * the counters back through the trace model. */
#include "bench/bench.h"
#include "store/store.h"
#include <gpuprof/common.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gp_bench_series_name(char *buf, size_t n, const gp_bench_result *r, size_t dev,
                          gp_bench_test t)
{
    const gp_bench_info *in = gp_bench_info_of(t);
    if (r->ndev == 1)
        snprintf(buf, n, "bench:%s", in->key);
    else
        snprintf(buf, n, "bench:%s/%s", r->devs[dev].sel, in->key);
}

static void put_samples(gp_store_writer *w, uint32_t name, uint32_t track, int64_t ts,
                        const gp_bench_stat *st)
{
    for (size_t i = 0; i < st->n; i++) {
        gp_store_ev ev;
        gp_store_ev_init(&ev, GP_ST_COUNTER);
        ev.name = name;
        ev.track = track;
        ev.ts = ts + (int64_t)i; /* order kept; the counters carry no time of their own */
        ev.value = st->samples[i];
        gp_store_writer_put(w, &ev, 1);
    }
}

int64_t gp_bench_store_save(const char *path, const gp_bench_result *r, const char *command,
                            gp_err *err)
{
    gp_store *s = NULL;
    int rc = gp_store_open(path, &s, err);
    if (rc) return rc;
    gp_store_run_info ri = {command, r->host, r->start_wall_ns, r->start_mono_ns, 0};
    int64_t run = gp_store_run_begin(s, &ri, err);
    if (run < 0) {
        gp_store_close(s);
        return run;
    }
    gp_store_writer_opts wo = {0, 0, "bench"};
    gp_store_writer *w = gp_store_writer_start(path, run, &wo, err);
    if (!w) {
        gp_store_close(s);
        return err->code ? err->code : GP_EIO;
    }
    for (size_t d = 0; d < r->ndev; d++) {
        const gp_bench_dev_result *dv = &r->devs[d];
        char label[192];
        snprintf(label, sizeof label, "%s %s", dv->sel, dv->name);
        /* the driver goes with the device (runs.devices shows both) */
        char devname[256];
        snprintf(devname, sizeof devname, "%s (driver %s)", dv->name, dv->driver);
        gp_store_writer_device(w, dv->backend, devname);
        uint32_t track =
            gp_store_writer_track(w, GP_STORE_TRACK_QUEUE, (int64_t)d, (int32_t)d, label);
        for (int t = 0; t < GP_BT__COUNT; t++) {
            const gp_bench_fig *f = &dv->figs[t];
            if (!f->valid) continue;
            char nm[192];
            gp_bench_series_name(nm, sizeof nm, r, d, (gp_bench_test)t);
            int64_t ts = r->start_mono_ns + (int64_t)t * 1000000;
            put_samples(w, gp_store_writer_str(w, nm), track, ts, &f->st);
            for (size_t k = 0; k < f->nsweep; k++) {
                char sn[224];
                snprintf(sn, sizeof sn, "%s@%lld", nm, (long long)f->sweep[k].bytes);
                put_samples(w, gp_store_writer_str(w, sn), track, ts + 10000 * (int64_t)(k + 1),
                            &f->sweep[k].st);
            }
        }
    }
    rc = gp_store_writer_stop(w);
    if (rc) gp_err_set(err, rc, "%s: cannot write the bench samples", path);
    int erc = gp_store_run_end(s, run, rc ? 1 : 0, r->duration_ns, 0, rc ? NULL : err);
    gp_store_close(s);
    if (rc) return rc;
    return erc ? erc : run;
}

int gp_bench_store_baseline(const char *path, const char *name, int64_t before, size_t last,
                            gp_bench_baseline *out, gp_err *err)
{
    memset(out, 0, sizeof *out);
    out->mean = NAN;
    sqlite3 *db = NULL;
    if (!(db = gp_store_open_reader(path)))
        return gp_err_set(err, GP_EIO, "%s: cannot open store", path);
    sqlite3_busy_timeout(db, 10000);
    /* per-run means of the series, newest runs first */
    const char *sql = "SELECT p.run, avg(c.value) FROM counters c JOIN processes p ON p.id = "
                      "c.proc JOIN strings s ON s.proc = c.proc AND s.id = c.name WHERE s.s = ?1 "
                      "AND (?2 = 0 OR p.run < ?2) GROUP BY p.run ORDER BY p.run DESC";
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        /* a store without the tables has no baseline */
        sqlite3_close(db);
        return 0;
    }
    sqlite3_bind_text(st, 1, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, before);
    double sum = 0;
    int s = SQLITE_DONE;
    while ((!last || out->runs < last) && (s = sqlite3_step(st)) == SQLITE_ROW) {
        if (!out->runs) out->last_run = sqlite3_column_int64(st, 0);
        sum += sqlite3_column_double(st, 1);
        out->runs++;
    }
    int bad = (!last || out->runs < last) && s != SQLITE_DONE; /* a damaged store */
    int rc = bad ? gp_err_set(err, GP_EPARSE, "%s: %s", path, sqlite3_errmsg(db)) : 0;
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (rc) {
        out->runs = 0;
        return rc;
    }
    if (out->runs) {
        out->valid = 1;
        out->mean = sum / (double)out->runs;
    }
    return 0;
}
