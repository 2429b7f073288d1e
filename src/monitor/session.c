/* monitor/session.c: monitoring sessions. Each active session aggregates the
 * samples of every tick per device and field (count, sum, min, max), keeps
 * its newest max_snapshots snapshots and its inference latencies, and turns
 * them into a JSON report with optimization suggestions. */
#include "monitor/session.h"
#include "store/access.h"
#include "core/stats.h"
#include "core/vec.h"
#include <fcntl.h>
#include <unistd.h>
#include "monitor/backend.h"
#include "monitor/fields.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct dev_agg {
    gp_dev_info info;
    uint64_t n[GP_MF_COUNT];
    double sum[GP_MF_COUNT], min[GP_MF_COUNT], max[GP_MF_COUNT], first[GP_MF_COUNT],
        last[GP_MF_COUNT];
    double peak_mem_pct;
    int have_mem_pct;
    uint64_t throttle_or;
    uint64_t samples;
} dev_agg;

typedef struct snapshot {
    int64_t wall_ns;
    char reason[64];
    size_t ndev;
    gp_dev_info *info;     /* ndev */
    gp_dev_sample *sample; /* ndev; valid == 0 when the device had none */
} snapshot;

typedef struct session {
    gp_session_info pub;
    GP_VEC(dev_agg) devs;
    snapshot *snaps; /* ring of max_snapshots */
    size_t snap_first, snap_n, snap_cap;
    uint64_t snaps_dropped;
    GP_VEC(double) lat_ms;
} session;

struct gp_sessions {
    gp_mon_config cfg;
    GP_VEC(session *) v; /* oldest first */
};

/* Latency histogram bucket upper edges (ms); the last bucket is open. */
static const double hist_edges[] = {0.1, 0.25, 0.5, 1,   2.5,  5,    10,  25,
                                    50,  100,  250, 500, 1000, 2500, 5000};
#define NEDGES (sizeof hist_edges / sizeof hist_edges[0])
_Static_assert(NEDGES <= GP_INF_HIST_MAX, "GP_INF_HIST_MAX too small");

const double *gp_sessions_hist_edges(size_t *n)
{
    *n = NEDGES;
    return hist_edges;
}

gp_sessions *gp_sessions_create(const gp_mon_config *c)
{
    gp_sessions *s = gp_xcalloc(1, sizeof *s);
    s->cfg = *c;
    return s;
}

static void snap_free(snapshot *sn)
{
    free(sn->info);
    free(sn->sample);
    memset(sn, 0, sizeof *sn);
}

static void session_free(session *x)
{
    if (!x) return;
    GP_VEC_FREE(x->devs);
    for (size_t i = 0; i < x->snap_n; i++) snap_free(&x->snaps[(x->snap_first + i) % x->snap_cap]);
    free(x->snaps);
    GP_VEC_FREE(x->lat_ms);
    free(x);
}

void gp_sessions_destroy(gp_sessions *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->v.n; i++) session_free(s->v.v[i]);
    GP_VEC_FREE(s->v);
    free(s);
}

static session *find(const gp_sessions *s, const char *name)
{
    /* newest first: a restarted name refers to the latest session */
    for (size_t i = s->v.n; i-- > 0;)
        if (!strcmp(s->v.v[i]->pub.name, name)) return s->v.v[i];
    return NULL;
}

static int valid_name(const char *n)
{
    size_t k = strlen(n);
    if (!k || k >= 64) return 0;
    for (const char *p = n; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-'))
            return 0;
    return n[0] != '.';
}

int gp_sessions_start(gp_sessions *s, const char *name, const char *desc, int64_t now_ns,
                      gp_err *err)
{
    if (!name || !valid_name(name))
        return gp_err_set(err, GP_EINVAL,
                          "session name '%s': use 1-63 letters, digits, '.', '_' or '-'",
                          name ? name : "");
    session *old = find(s, name);
    if (old && old->pub.active)
        return gp_err_set(err, GP_ESTATE, "session '%s' is already active", name);
    /* retention: drop the oldest finished sessions beyond the limit */
    while (s->v.n >= (size_t)s->cfg.max_profiling_sessions) {
        size_t i = 0;
        while (i < s->v.n && s->v.v[i]->pub.active) i++;
        if (i == s->v.n)
            return gp_err_set(err, GP_ERANGE, "%zu sessions are active (max_profiling_sessions)",
                              s->v.n);
        session_free(s->v.v[i]);
        memmove(&s->v.v[i], &s->v.v[i + 1], (s->v.n - i - 1) * sizeof *s->v.v);
        s->v.n--;
    }
    session *x = gp_xcalloc(1, sizeof *x);
    snprintf(x->pub.name, sizeof x->pub.name, "%s", name);
    snprintf(x->pub.description, sizeof x->pub.description, "%s", desc ? desc : "");
    x->pub.start_wall_ns = now_ns;
    x->pub.active = 1;
    x->snap_cap = (size_t)s->cfg.max_snapshots;
    x->snaps = gp_xcalloc(x->snap_cap, sizeof *x->snaps);
    if (GP_VEC_PUSH(s->v, x)) {
        session_free(x);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    return 0;
}

int gp_sessions_stop(gp_sessions *s, const char *name, int64_t now_ns, gp_err *err)
{
    session *x = find(s, name);
    if (!x) return gp_err_set(err, GP_ENOTFOUND, "no session '%s'", name);
    if (!x->pub.active) return gp_err_set(err, GP_ESTATE, "session '%s' is not active", name);
    x->pub.active = 0;
    x->pub.stop_wall_ns = now_ns;
    return 0;
}

static dev_agg *agg_for(session *x, size_t i, const gp_dev_info *info)
{
    while (x->devs.n <= i) {
        dev_agg z;
        memset(&z, 0, sizeof z);
        if (GP_VEC_PUSH(x->devs, z)) return NULL;
    }
    dev_agg *d = &x->devs.v[i];
    d->info = *info;
    return d;
}

void gp_sessions_observe(gp_sessions *s, size_t ndev, const gp_dev_info *info,
                         const gp_dev_sample *samples, const int *have)
{
    for (size_t k = 0; k < s->v.n; k++) {
        session *x = s->v.v[k];
        if (!x->pub.active) continue;
        for (size_t i = 0; i < ndev; i++) {
            if (!have[i]) continue;
            dev_agg *d = agg_for(x, i, &info[i]);
            if (!d) return;
            const gp_dev_sample *sm = &samples[i];
            d->samples++;
            for (int f = 0; f < GP_MF_COUNT; f++) {
                if (!gp_sample_has(sm, f)) continue;
                double v = sm->v[f];
                if (!d->n[f]) d->min[f] = d->max[f] = d->first[f] = v;
                d->n[f]++;
                d->sum[f] += v;
                if (v < d->min[f]) d->min[f] = v;
                if (v > d->max[f]) d->max[f] = v;
                d->last[f] = v;
            }
            if (gp_sample_has(sm, GP_MF_THROTTLE))
                d->throttle_or |= (uint64_t)sm->v[GP_MF_THROTTLE];
            if (gp_sample_has(sm, GP_MF_MEM_USED) && gp_sample_has(sm, GP_MF_MEM_TOTAL) &&
                sm->v[GP_MF_MEM_TOTAL] > 0) {
                double pct = 100.0 * sm->v[GP_MF_MEM_USED] / sm->v[GP_MF_MEM_TOTAL];
                if (!d->have_mem_pct || pct > d->peak_mem_pct) d->peak_mem_pct = pct;
                d->have_mem_pct = 1;
            }
        }
    }
}

static void snap_add(const gp_sessions *s, session *x, const char *reason, int64_t now_ns,
                     size_t ndev, const gp_dev_info *info, const gp_dev_sample *samples,
                     const int *have)
{
    size_t cap = x->snap_cap;
    (void)s;
    snapshot *slot;
    if (x->snap_n == cap) { /* retention: the oldest goes */
        slot = &x->snaps[x->snap_first];
        snap_free(slot);
        x->snap_first = (x->snap_first + 1) % cap;
        x->snap_n--;
        x->snaps_dropped++;
    }
    slot = &x->snaps[(x->snap_first + x->snap_n) % cap];
    slot->wall_ns = now_ns;
    snprintf(slot->reason, sizeof slot->reason, "%s", reason ? reason : "on demand");
    slot->ndev = ndev;
    slot->info = gp_xcalloc(ndev ? ndev : 1, sizeof *slot->info);
    slot->sample = gp_xcalloc(ndev ? ndev : 1, sizeof *slot->sample);
    for (size_t i = 0; i < ndev; i++) {
        slot->info[i] = info[i];
        if (have[i]) slot->sample[i] = samples[i];
    }
    x->snap_n++;
}

int gp_sessions_snapshot(gp_sessions *s, const char *name, const char *reason, int64_t now_ns,
                         size_t ndev, const gp_dev_info *info, const gp_dev_sample *samples,
                         const int *have)
{
    int n = 0;
    for (size_t k = 0; k < s->v.n; k++) {
        session *x = s->v.v[k];
        if (name ? strcmp(x->pub.name, name) || x != find(s, name) : !x->pub.active) continue;
        snap_add(s, x, reason, now_ns, ndev, info, samples, have);
        n++;
    }
    return n ? 0 : GP_ENOTFOUND;
}

int gp_sessions_track(gp_sessions *s, const char *name, double ms)
{
    if (!isfinite(ms) || ms < 0) return GP_EINVAL;
    int n = 0;
    for (size_t k = 0; k < s->v.n; k++) {
        session *x = s->v.v[k];
        if (name ? x != find(s, name) : !x->pub.active) continue;
        if (GP_VEC_PUSH(x->lat_ms, ms)) return GP_ENOMEM;
        n++;
    }
    return n ? 0 : GP_ENOTFOUND;
}

size_t gp_sessions_active(const gp_sessions *s)
{
    size_t n = 0;
    for (size_t k = 0; k < s->v.n; k++) n += s->v.v[k]->pub.active != 0;
    return n;
}

static void fill_info(const session *x, gp_session_info *o)
{
    *o = x->pub;
    o->snapshots = x->snap_n;
    o->inferences = x->lat_ms.n;
}

int gp_sessions_info(const gp_sessions *s, const char *name, gp_session_info *out)
{
    const session *x = find(s, name);
    if (!x) return GP_ENOTFOUND;
    fill_info(x, out);
    return 0;
}

size_t gp_sessions_list(const gp_sessions *s, gp_session_info *out, size_t max)
{
    for (size_t k = 0; k < s->v.n && k < max; k++) fill_info(s->v.v[k], &out[k]);
    return s->v.n;
}

static double avg(const dev_agg *d, int f)
{
    return d->n[f] ? d->sum[f] / (double)d->n[f] : NAN;
}

/* Appends one suggestion object. */
static void suggest(gp_sbuf *b, int *first, const char *kind, int dev, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void suggest(gp_sbuf *b, int *first, const char *kind, int dev, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gp_sbuf_puts(b, *first ? "{" : ",{");
    *first = 0;
    gp_json_key(b, "kind", 0);
    gp_json_str(b, kind);
    if (dev >= 0) {
        gp_json_key(b, "device", 1);
        gp_json_int(b, dev);
    }
    gp_json_key(b, "message", 1);
    gp_json_str(b, msg);
    gp_sbuf_putc(b, '}');
}

static int is_gpu(const dev_agg *d)
{
    return !strcmp(d->info.kind, "gpu") && strcmp(d->info.backend, "opencl");
}

int gp_sessions_report(const gp_sessions *s, const char *name, const gp_alerts *a, gp_sbuf *b)
{
    const session *x = find(s, name);
    if (!x) return GP_ENOTFOUND;
    const gp_mon_config *c = &s->cfg;
    gp_sbuf_puts(b, "{\"session\":");
    gp_json_str(b, x->pub.name);
    gp_json_key(b, "description", 1);
    gp_json_str(b, x->pub.description);
    gp_json_key(b, "active", 1);
    gp_sbuf_puts(b, x->pub.active ? "true" : "false");
    gp_json_key(b, "start_wall_ns", 1);
    gp_json_int(b, x->pub.start_wall_ns);
    gp_json_key(b, "stop_wall_ns", 1);
    if (x->pub.active)
        gp_sbuf_puts(b, "null");
    else
        gp_json_int(b, x->pub.stop_wall_ns);
    gp_json_key(b, "duration_s", 1);
    if (x->pub.active)
        gp_sbuf_puts(b, "null");
    else
        gp_json_num(b, (double)(x->pub.stop_wall_ns - x->pub.start_wall_ns) / 1e9);
    /* totals and averages over the GPUs */
    uint64_t total_samples = 0;
    double util_sum = 0, max_temp = NAN, energy = 0, peak_mem = 0;
    int nutil = 0, have_energy = 0, have_mem = 0, ngpu = 0;
    for (size_t i = 0; i < x->devs.n; i++) {
        const dev_agg *d = &x->devs.v[i];
        total_samples += d->samples;
        if (!is_gpu(d)) continue;
        ngpu++;
        if (d->n[GP_MF_UTIL]) util_sum += avg(d, GP_MF_UTIL), nutil++;
        if (d->n[GP_MF_TEMP] && (isnan(max_temp) || d->max[GP_MF_TEMP] > max_temp))
            max_temp = d->max[GP_MF_TEMP];
        if (d->n[GP_MF_ENERGY] >= 2)
            energy += d->last[GP_MF_ENERGY] - d->first[GP_MF_ENERGY], have_energy = 1;
        if (d->n[GP_MF_MEM_USED]) peak_mem += d->max[GP_MF_MEM_USED], have_mem = 1;
    }
    gp_json_key(b, "totals", 1);
    gp_sbuf_puts(b, "{\"samples\":");
    gp_json_int(b, (int64_t)total_samples);
    gp_json_key(b, "gpus", 1);
    gp_json_int(b, ngpu);
    gp_json_key(b, "snapshots", 1);
    gp_json_int(b, (int64_t)x->snap_n);
    gp_json_key(b, "snapshots_dropped", 1);
    gp_json_int(b, (int64_t)x->snaps_dropped);
    gp_json_key(b, "inference_count", 1);
    gp_json_int(b, (int64_t)x->lat_ms.n);
    gp_json_key(b, "energy_j", 1);
    if (have_energy)
        gp_json_num(b, energy);
    else
        gp_sbuf_puts(b, "null");
    gp_json_key(b, "peak_memory_used_bytes", 1);
    if (have_mem)
        gp_json_num(b, peak_mem);
    else
        gp_sbuf_puts(b, "null");
    gp_sbuf_puts(b, "}");
    gp_json_key(b, "averages", 1);
    gp_sbuf_puts(b, "{\"gpu_util_pct\":");
    gp_json_num(b, nutil ? util_sum / nutil : NAN);
    gp_sbuf_puts(b, "}");
    gp_json_key(b, "max_temperature_c", 1);
    gp_json_num(b, max_temp);
    /* devices */
    gp_json_key(b, "devices", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < x->devs.n; i++) {
        const dev_agg *d = &x->devs.v[i];
        gp_sbuf_puts(b, i ? ",{\"index\":" : "{\"index\":");
        gp_json_int(b, (int64_t)i);
        gp_json_key(b, "name", 1);
        gp_json_str(b, d->info.name);
        gp_json_key(b, "backend", 1);
        gp_json_str(b, d->info.backend);
        gp_json_key(b, "kind", 1);
        gp_json_str(b, d->info.kind);
        gp_json_key(b, "samples", 1);
        gp_json_int(b, (int64_t)d->samples);
        gp_json_key(b, "fields", 1);
        gp_sbuf_putc(b, '{');
        int fc = 0;
        for (int f = 0; f < GP_MF_COUNT; f++) {
            if (!d->n[f]) continue;
            gp_json_key(b, gp_mfield_key(f), fc++);
            gp_sbuf_puts(b, "{\"avg\":");
            gp_json_num(b, avg(d, f));
            gp_json_key(b, "min", 1);
            gp_json_num(b, d->min[f]);
            gp_json_key(b, "max", 1);
            gp_json_num(b, d->max[f]);
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_putc(b, '}');
        gp_json_key(b, "peak_mem_pct", 1);
        gp_json_num(b, d->have_mem_pct ? d->peak_mem_pct : NAN);
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_putc(b, ']');
    /* inference latencies */
    gp_json_key(b, "inference", 1);
    gp_sbuf_puts(b, "{\"count\":");
    gp_json_int(b, (int64_t)x->lat_ms.n);
    gp_dstats st;
    memset(&st, 0, sizeof st);
    if (x->lat_ms.n) {
        double *tmp = malloc(x->lat_ms.n * sizeof *tmp);
        if (tmp) {
            memcpy(tmp, x->lat_ms.v, x->lat_ms.n * sizeof *tmp);
            gp_stats_f64(tmp, x->lat_ms.n, &st);
            free(tmp);
        }
        static const char *const k[] = {"mean_ms", "min_ms", "max_ms",
                                        "p50_ms",  "p95_ms", "p99_ms"};
        double v[] = {st.mean, st.min, st.max, st.p50, st.p95, st.p99};
        for (int i = 0; i < 6; i++) {
            gp_json_key(b, k[i], 1);
            gp_json_num(b, v[i]);
        }
        uint64_t hist[NEDGES + 1] = {0};
        for (size_t i = 0; i < x->lat_ms.n; i++) {
            size_t j = 0;
            while (j < NEDGES && x->lat_ms.v[i] > hist_edges[j]) j++;
            hist[j]++;
        }
        gp_json_key(b, "histogram", 1);
        gp_sbuf_putc(b, '[');
        for (size_t j = 0; j <= NEDGES; j++) {
            gp_sbuf_puts(b, j ? ",{\"le_ms\":" : "{\"le_ms\":");
            if (j < NEDGES)
                gp_json_num(b, hist_edges[j]);
            else
                gp_sbuf_puts(b, "null");
            gp_json_key(b, "count", 1);
            gp_json_int(b, (int64_t)hist[j]);
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_putc(b, ']');
    }
    gp_sbuf_putc(b, '}');
    /* alerts */
    gp_json_key(b, "alerts", 1);
    gp_sbuf_putc(b, '{');
    for (int k = 0; k < GP_ALERT__COUNT; k++) {
        gp_json_key(b, gp_alert_kind_name(k), k);
        gp_json_int(b, a ? (int64_t)gp_alerts_count(a, k) : 0);
    }
    gp_sbuf_putc(b, '}');
    /* snapshots */
    gp_json_key(b, "snapshots", 1);
    gp_sbuf_putc(b, '[');
    for (size_t i = 0; i < x->snap_n; i++) {
        const snapshot *sn = &x->snaps[(x->snap_first + i) % x->snap_cap];
        gp_sbuf_puts(b, i ? ",{\"wall_ns\":" : "{\"wall_ns\":");
        gp_json_int(b, sn->wall_ns);
        gp_json_key(b, "reason", 1);
        gp_json_str(b, sn->reason);
        gp_json_key(b, "devices", 1);
        gp_sbuf_putc(b, '[');
        for (size_t j = 0; j < sn->ndev; j++) {
            gp_sbuf_puts(b, j ? ",{\"name\":" : "{\"name\":");
            gp_json_str(b, sn->info[j].name);
            gp_fields_json(b, &sn->sample[j], 0);
            gp_sbuf_putc(b, '}');
        }
        gp_sbuf_puts(b, "]}");
    }
    gp_sbuf_putc(b, ']');
    /* suggestions */
    gp_json_key(b, "suggestions", 1);
    gp_sbuf_putc(b, '[');
    int first = 1;
    for (size_t i = 0; i < x->devs.n; i++) {
        const dev_agg *d = &x->devs.v[i];
        if (!is_gpu(d)) continue;
        const char *nm = d->info.name;
        if (d->n[GP_MF_UTIL] >= 2 && avg(d, GP_MF_UTIL) < 30)
            suggest(b, &first, "low_utilization", (int)i,
                    "%s averaged %.0f %% utilization: the GPU waits; overlap data loading "
                    "(more loader workers, pinned memory), raise the batch size or fuse small "
                    "kernels",
                    nm, avg(d, GP_MF_UTIL));
        if (d->have_mem_pct && d->peak_mem_pct >= c->memory_warning_threshold)
            suggest(b, &first, "high_memory", (int)i,
                    "%s peaked at %.0f %% memory: reduce the batch size, use mixed precision or "
                    "activation checkpointing before it runs out",
                    nm, d->peak_mem_pct);
        if (d->n[GP_MF_TEMP] && d->max[GP_MF_TEMP] >= c->temperature_warning_threshold)
            suggest(b, &first, "high_temperature", (int)i,
                    "%s reached %.0f C: check cooling and airflow; a lower power limit costs "
                    "little speed",
                    nm, d->max[GP_MF_TEMP]);
        if (d->throttle_or & (GP_THR_SW_THERMAL | GP_THR_HW_THERMAL | GP_THR_HW_SLOWDOWN |
                              GP_THR_SW_POWER_CAP | GP_THR_HW_POWER_BRAKE)) {
            char r[160];
            gp_throttle_decode(d->throttle_or &
                                   ~(uint64_t)(GP_THR_GPU_IDLE | GP_THR_APP_CLOCKS |
                                               GP_THR_SYNC_BOOST | GP_THR_DISPLAY_CLOCKS),
                               r, sizeof r);
            suggest(b, &first, "throttling", (int)i, "%s slowed its clocks (%s)", nm, r);
        }
    }
    if (x->lat_ms.n >= 1 && st.p95 > c->slow_inference_ms)
        suggest(b, &first, "slow_inference", -1,
                "p95 inference latency %.1f ms exceeds %.1f ms: profile the model (gpuprof "
                "summary), batch requests, use half precision or a compiled graph",
                st.p95, c->slow_inference_ms);
    gp_sbuf_puts(b, "]}");
    return 0;
}

static int mkdir_p(const char *dir)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, gp_access_mode(1)) && errno != EEXIST) return -1;
            *p = '/';
        }
    if (mkdir(tmp, gp_access_mode(1)) && errno != EEXIST) return -1;
    return 0;
}

int gp_sessions_write_report(gp_sessions *s, const char *name, const char *dir, const gp_alerts *a,
                             gp_err *err)
{
    session *x = find(s, name);
    if (!x) return gp_err_set(err, GP_ENOTFOUND, "no session '%s'", name);
    if (mkdir_p(dir))
        return gp_err_set(err, GP_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
    char path[1024], tmp[1100];
    snprintf(path, sizeof path, "%s/%s.json", dir, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    gp_sbuf b = {0};
    gp_sessions_report(s, name, a, &b);
    gp_sbuf_putc(&b, '\n');
    /* owner-only unless share_group (docs/security.md) */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, gp_access_mode(0));
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f && fd >= 0) close(fd);
    int rc = f ? gp_sbuf_write(&b, f) : GP_EIO;
    if (f && fclose(f)) rc = GP_EIO;
    gp_sbuf_free(&b);
    if (rc || rename(tmp, path)) {
        remove(tmp);
        return gp_err_set(err, GP_EIO, "%s: cannot write the report", path);
    }
    gp_backend_strcpy(x->pub.report_path, sizeof x->pub.report_path, path);
    return 0;
}
