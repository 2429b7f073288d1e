/* monitor/monitor.c: the monitor context behind gpuprof/monitor.h: backend
 * initialisation and fallbacks, device discovery and re-discovery, the
 * sampler thread with per-device ring-buffer history, health, and the glue
 * to alerts and sessions. One mutex guards everything. */
#include "core/clock.h"
#include "core/vec.h"
#include "monitor/alerts.h"
#include "monitor/backend.h"
#include "monitor/monitor.h"
#include "monitor/registry.h"
#include "monitor/session.h"
#include "monitor/session_store.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_BK 16

typedef struct mdev {
    gp_dev_info info;
    int bk, bidx; /* backend slot and position in its discover list */
    char key[200];
    gp_dev_sample *ring;
    size_t head, n; /* next write position, stored samples */
    gp_dev_sample last;
    int have_last;
    gp_dev_proc procs[GP_MAX_PROCS];
    int nprocs;
} mdev;

typedef struct mbk {
    const gp_backend *ops;
    void *state;
    gp_health_entry health;
    char init_reason[256];
    int fallback_used; /* a fallback standing in for an unavailable backend */
} mbk;

struct gp_monitor {
    gp_mon_config cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    int running, stop;
    mbk bk[MAX_BK];
    int nbk;
    GP_VEC(mdev) devs;
    gp_alerts *alerts;
    gp_sessions *sessions;
    int log_open;
    uint64_t ticks;
    uint64_t generation;       /* changes with anything gp_monitor_view shows */
    uint64_t sessions_started; /* ever, for gpu_profiling_sessions_total */
    int64_t last_tick_wall_ns;
    uint64_t inf_hist[GP_INF_HIST_MAX + 1]; /* every tracked inference, cumulative */
    uint64_t inf_count;
    double inf_sum_ms;
    int64_t last_discovery_ns;
    /* scratch for sessions, one entry per device */
    GP_VEC(gp_dev_info) s_info;
    GP_VEC(gp_dev_sample) s_sample;
    GP_VEC(int) s_have;
};

const char *gp_health_name(int state)
{
    return state == GP_HEALTH_OK ? "ok" : state == GP_HEALTH_DEGRADED ? "degraded" : "unavailable";
}

static int bk_enabled(const gp_mon_config *c, const gp_backend *b)
{
    if (!strcmp(b->name, "opencl")) return c->enable_opencl_monitoring;
    if (!strcmp(b->name, "host")) return c->enable_host_monitoring;
    return c->enable_gpu_monitoring;
}

static mbk *bk_named(gp_monitor *m, const char *name)
{
    for (int i = 0; i < m->nbk; i++)
        if (!strcmp(m->bk[i].ops->name, name)) return &m->bk[i];
    return NULL;
}

static void init_backends(gp_monitor *m)
{
    size_t n;
    const gp_backend *const *list = gp_registry_backends(&n);
    gp_backend_env env = {&m->cfg, (int64_t)(m->cfg.monitoring_interval_seconds * 1e9)};
    for (size_t i = 0; i < n && m->nbk < MAX_BK; i++) {
        const gp_backend *b = list[i];
        if (!bk_enabled(&m->cfg, b)) continue;
        mbk *primary = b->fallback_for ? bk_named(m, b->fallback_for) : NULL;
        if (b->fallback_for && (!primary || primary->state)) continue; /* not needed */
        mbk *k = &m->bk[m->nbk++];
        memset(k, 0, sizeof *k);
        k->ops = b;
        gp_backend_strcpy(k->health.backend, sizeof k->health.backend, b->name);
        k->health.state = GP_HEALTH_UNAVAILABLE;
        if (b->init(&k->state, &env, &k->health)) k->state = NULL;
        gp_backend_strcpy(k->init_reason, sizeof k->init_reason, k->health.reason);
        if (primary && k->state) {
            /* say why the fallback is in use */
            k->fallback_used = 1;
            k->health.state = GP_HEALTH_DEGRADED;
            char why[256], alt[256];
            gp_backend_strcpy(why, sizeof why, primary->health.reason);
            gp_backend_strcpy(alt, sizeof alt, k->init_reason);
            snprintf(k->health.reason, sizeof k->health.reason, "%.100s, using %.140s", why, alt);
        }
    }
}

static void make_key(const gp_dev_info *d, int bidx, char *key, size_t n)
{
    const char *id = d->uuid[0] ? d->uuid : d->pci_bus_id[0] ? d->pci_bus_id : "";
    if (id[0])
        snprintf(key, n, "%s|%s", d->backend, id);
    else
        snprintf(key, n, "%s|#%d|%.100s", d->backend, bidx, d->name);
}

/* Runs every backend's discover and merges the result; m->mu held. */
static void discover_locked(gp_monitor *m)
{
    gp_dev_info *tmp = gp_xcalloc(GP_MAX_DEVS, sizeof *tmp);
    for (int b = 0; b < m->nbk; b++) {
        mbk *k = &m->bk[b];
        if (!k->state) continue;
        gp_err err = {0};
        int n = k->ops->discover(k->state, tmp, GP_MAX_DEVS, &err);
        if (n < 0) {
            k->health.state = GP_HEALTH_DEGRADED;
            gp_backend_strcpy(k->health.reason, sizeof k->health.reason, err.msg);
            n = 0;
        }
        size_t nold = m->devs.n;
        unsigned char *seen = gp_xcalloc(nold + 1, 1);
        for (int i = 0; i < n; i++) {
            char key[200];
            make_key(&tmp[i], i, key, sizeof key);
            size_t j = 0;
            while (j < m->devs.n && strcmp(m->devs.v[j].key, key)) j++;
            if (j < m->devs.n) {
                mdev *d = &m->devs.v[j];
                int was_lost = !d->info.present;
                d->info = tmp[i];
                d->bidx = i;
                if (j < nold) seen[j] = 1;
                if (was_lost && d->info.present) gp_alerts_device_back(m->alerts, (int)j);
                continue;
            }
            mdev nd;
            memset(&nd, 0, sizeof nd);
            nd.info = tmp[i];
            nd.bk = b;
            nd.bidx = i;
            snprintf(nd.key, sizeof nd.key, "%s", key);
            nd.ring = calloc((size_t)m->cfg.history_size, sizeof *nd.ring);
            if (!nd.ring || GP_VEC_PUSH(m->devs, nd)) {
                free(nd.ring);
                break;
            }
        }
        for (size_t j = 0; j < nold; j++) {
            mdev *d = &m->devs.v[j];
            if (d->bk == b && !seen[j] && d->info.present) { /* not listed again */
                /* lost as when its sample fails with GP_ENODEV: no last
                 * sample (gp_monitor_get_status returned the stale one) and
                 * one device_lost alert (none came when re-discovery saw
                 * the device go before a sample did) */
                d->info.present = 0;
                snprintf(d->info.status, sizeof d->info.status, "no longer found");
                d->nprocs = 0;
                d->have_last = 0;
                gp_alerts_device_lost(m->alerts, (int)j, d->info.status);
            }
        }
        free(seen);
        k->health.devices = 0;
        for (size_t j = 0; j < m->devs.n; j++)
            k->health.devices += m->devs.v[j].bk == b && m->devs.v[j].info.present;
    }
    free(tmp);
    m->last_discovery_ns = gp_clock_mono_ns();
    m->generation++;
}

gp_monitor *gp_monitor_create(const gp_mon_config *c)
{
    gp_monitor *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->cfg = *c;
    if (m->cfg.history_size < 2) m->cfg.history_size = 2;
    if (m->cfg.max_snapshots < 1) m->cfg.max_snapshots = 1;
    if (m->cfg.max_profiling_sessions < 1) m->cfg.max_profiling_sessions = 1;
    if (m->cfg.monitoring_interval_seconds < 0.01) m->cfg.monitoring_interval_seconds = 0.01;
    pthread_mutex_init(&m->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&m->cv, &ca);
    pthread_condattr_destroy(&ca);
    m->alerts = gp_alerts_create(&m->cfg);
    m->sessions = gp_sessions_create(&m->cfg);
    init_backends(m);
    pthread_mutex_lock(&m->mu);
    discover_locked(m);
    pthread_mutex_unlock(&m->mu);
    return m;
}

static void emit(gp_monitor *m, int type, const char *fmt, const char *arg)
{
    gp_event ev = {0};
    ev.type = type;
    ev.device = -1;
    snprintf(ev.message, sizeof ev.message, fmt, arg);
    gp_alerts_emit(m->alerts, &ev);
}

static int mkdir_p(const char *dir)
{
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
            *p = '/';
        }
    return mkdir(tmp, 0777) && errno != EEXIST ? -1 : 0;
}

/* Opens OUTPUT_DIR/events.jsonl once, when events are enabled. */
static void open_log_locked(gp_monitor *m)
{
    if (m->log_open || !m->cfg.enable_event_log || !m->cfg.output_dir[0]) return;
    char path[1100];
    snprintf(path, sizeof path, "%s/events.jsonl", m->cfg.output_dir);
    gp_err err = {0};
    if (mkdir_p(m->cfg.output_dir) == 0 && gp_alerts_open_log(m->alerts, path, &err) == 0)
        m->log_open = 1;
}

static int session_stop_locked(gp_monitor *m, const char *name)
{
    gp_err err = {0};
    int rc = gp_sessions_stop(m->sessions, name, gp_clock_wall_ns(), &err);
    if (rc) return rc;
    emit(m, GP_EV_SESSION_STOPPED, "session %s stopped", name);
    if (m->cfg.export_json_reports && m->cfg.output_dir[0]) {
        rc = gp_sessions_write_report(m->sessions, name, m->cfg.output_dir, m->alerts, &err);
        if (rc == 0)
            emit(m, GP_EV_DATA_GENERATED, "report of session %s written", name);
        else
            emit(m, GP_EV_DATA_GENERATED, "report not written: %.200s", err.msg);
    }
    gp_session_info si;
    if (m->cfg.store_path[0] && gp_sessions_info(m->sessions, name, &si) == 0) {
        gp_sbuf b = {0};
        gp_sessions_report(m->sessions, name, m->alerts, &b);
        int src = gp_session_store_put(m->cfg.store_path, name, si.description, si.start_wall_ns,
                                       si.stop_wall_ns, gp_sbuf_cstr(&b), &err);
        gp_sbuf_free(&b);
        if (src == 0)
            emit(m, GP_EV_DATA_GENERATED, "session %s stored in the database", name);
        else
            emit(m, GP_EV_DATA_GENERATED, "session not stored: %.200s", err.msg);
        if (!rc) rc = src;
    }
    return rc;
}

void gp_monitor_destroy(gp_monitor *m)
{
    if (!m) return;
    gp_monitor_stop(m);
    pthread_mutex_lock(&m->mu);
    size_t ns = gp_sessions_list(m->sessions, NULL, 0);
    gp_session_info *si = calloc(ns ? ns : 1, sizeof *si);
    if (si) {
        gp_sessions_list(m->sessions, si, ns);
        for (size_t i = 0; i < ns; i++)
            if (si[i].active) session_stop_locked(m, si[i].name);
        free(si);
    }
    pthread_mutex_unlock(&m->mu);
    for (int b = 0; b < m->nbk; b++)
        if (m->bk[b].state) m->bk[b].ops->fini(m->bk[b].state);
    for (size_t i = 0; i < m->devs.n; i++) free(m->devs.v[i].ring);
    GP_VEC_FREE(m->devs);
    GP_VEC_FREE(m->s_info);
    GP_VEC_FREE(m->s_sample);
    GP_VEC_FREE(m->s_have);
    gp_alerts_destroy(m->alerts);
    gp_sessions_destroy(m->sessions);
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

/* One tick: every present device once; m->mu held. */
static void tick_locked(gp_monitor *m)
{
    int64_t mono = gp_clock_mono_ns(), wall = gp_clock_wall_ns();
    if (m->cfg.device_discovery_interval_seconds > 0 &&
        mono - m->last_discovery_ns >= (int64_t)(m->cfg.device_discovery_interval_seconds * 1e9))
        discover_locked(m);
    for (int b = 0; b < m->nbk; b++)
        if (m->bk[b].state && m->bk[b].ops->begin_tick)
            m->bk[b].ops->begin_tick(m->bk[b].state, mono);
    size_t nd = m->devs.n;
    if (GP_VEC_RESERVE(m->s_info, nd) || GP_VEC_RESERVE(m->s_sample, nd) ||
        GP_VEC_RESERVE(m->s_have, nd))
        return;
    int raised = 0;
    for (size_t i = 0; i < nd; i++) {
        mdev *d = &m->devs.v[i];
        mbk *k = &m->bk[d->bk];
        m->s_have.v[i] = 0;
        m->s_info.v[i] = d->info;
        if (!d->info.present || !k->state) continue;
        gp_dev_sample s;
        memset(&s, 0, sizeof s);
        s.wall_ns = wall;
        int np = m->cfg.enable_process_monitoring ? GP_MAX_PROCS : 0;
        gp_err err = {0};
        int rc = k->ops->sample(k->state, d->bidx, mono, &s, np ? d->procs : NULL, &np, &err);
        if (rc == GP_ENODEV) {
            d->info.present = 0;
            gp_backend_strcpy(d->info.status, sizeof d->info.status, err.msg);
            d->nprocs = 0;
            d->have_last = 0;
            k->health.state = GP_HEALTH_DEGRADED;
            if (k->health.devices > 0) k->health.devices--;
            /* the device named while others of the backend still answer; once
             * none does, the backend's own message alone (every device failed
             * for it, e.g. nvidia-smi's driver error), whole */
            if (k->health.devices > 0)
                snprintf(k->health.reason, sizeof k->health.reason, "%.60s: %.190s", d->info.name,
                         err.msg);
            else
                gp_backend_strcpy(k->health.reason, sizeof k->health.reason, err.msg);
            gp_alerts_device_lost(m->alerts, (int)i, err.msg);
            m->s_info.v[i] = d->info;
            continue;
        }
        d->nprocs = np;
        d->last = s;
        d->have_last = 1;
        d->ring[d->head] = s;
        d->head = (d->head + 1) % (size_t)m->cfg.history_size;
        if (d->n < (size_t)m->cfg.history_size) d->n++;
        m->s_sample.v[i] = s;
        m->s_have.v[i] = 1;
        raised += gp_alerts_check(m->alerts, (int)i, d->info.name, d->info.kind, &s);
    }
    gp_sessions_observe(m->sessions, nd, m->s_info.v, m->s_sample.v, m->s_have.v);
    if (raised && m->cfg.enable_snapshot_on_alert && gp_sessions_active(m->sessions))
        gp_sessions_snapshot(m->sessions, NULL, "alert", wall, nd, m->s_info.v, m->s_sample.v,
                             m->s_have.v);
    m->ticks++;
    m->last_tick_wall_ns = wall;
    m->generation++;
}

int gp_monitor_sample_now(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    tick_locked(m);
    pthread_mutex_unlock(&m->mu);
    return 0;
}

static void *sampler_main(void *arg)
{
    gp_monitor *m = arg;
    int64_t period = (int64_t)(m->cfg.monitoring_interval_seconds * 1e9);
    pthread_mutex_lock(&m->mu);
    int64_t next = gp_clock_mono_ns();
    while (!m->stop) {
        tick_locked(m);
        next += period;
        int64_t now = gp_clock_mono_ns();
        if (next < now) next = now; /* fell behind: do not burst */
        struct timespec ts = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
        while (!m->stop && pthread_cond_timedwait(&m->cv, &m->mu, &ts) != ETIMEDOUT) {
        }
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

int gp_monitor_start(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    if (m->running) {
        pthread_mutex_unlock(&m->mu);
        return GP_ESTATE;
    }
    m->stop = 0;
    open_log_locked(m);
    emit(m, GP_EV_PROFILER_STARTED, "monitor started%s", "");
    int rc = pthread_create(&m->thread, NULL, sampler_main, m);
    m->running = rc == 0;
    pthread_mutex_unlock(&m->mu);
    return rc ? GP_ENOMEM : 0;
}

int gp_monitor_stop(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    if (!m->running) {
        pthread_mutex_unlock(&m->mu);
        return 0;
    }
    m->stop = 1;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
    pthread_mutex_lock(&m->mu);
    m->running = 0;
    emit(m, GP_EV_PROFILER_STOPPED, "monitor stopped%s", "");
    pthread_mutex_unlock(&m->mu);
    return 0;
}

int gp_monitor_rediscover(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    discover_locked(m);
    int n = (int)m->devs.n;
    pthread_mutex_unlock(&m->mu);
    return n;
}

size_t gp_monitor_device_count(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    size_t n = m->devs.n;
    pthread_mutex_unlock(&m->mu);
    return n;
}

int gp_monitor_device_info(gp_monitor *m, size_t i, gp_dev_info *out)
{
    int rc = GP_ENOTFOUND;
    pthread_mutex_lock(&m->mu);
    if (i < m->devs.n) {
        *out = m->devs.v[i].info;
        rc = 0;
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int gp_monitor_get_status(gp_monitor *m, size_t i, gp_dev_sample *out)
{
    int rc = GP_ENOTFOUND;
    pthread_mutex_lock(&m->mu);
    if (i < m->devs.n) {
        rc = m->devs.v[i].have_last ? 0 : GP_ENODEV;
        if (!rc) *out = m->devs.v[i].last;
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

size_t gp_monitor_history(gp_monitor *m, size_t i, gp_dev_sample *out, size_t max)
{
    size_t k = 0;
    pthread_mutex_lock(&m->mu);
    if (i < m->devs.n) {
        const mdev *d = &m->devs.v[i];
        size_t cap = (size_t)m->cfg.history_size, n = d->n < max ? d->n : max;
        size_t start = (d->head + cap - n) % cap; /* the newest n, oldest first */
        for (; k < n; k++) out[k] = d->ring[(start + k) % cap];
    }
    pthread_mutex_unlock(&m->mu);
    return k;
}

size_t gp_monitor_processes(gp_monitor *m, size_t i, gp_dev_proc *out, size_t max)
{
    size_t k = 0;
    pthread_mutex_lock(&m->mu);
    if (i < m->devs.n)
        for (; k < (size_t)m->devs.v[i].nprocs && k < max; k++) out[k] = m->devs.v[i].procs[k];
    pthread_mutex_unlock(&m->mu);
    return k;
}

uint64_t gp_monitor_ticks(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    uint64_t t = m->ticks;
    pthread_mutex_unlock(&m->mu);
    return t;
}

static int health_locked(gp_monitor *m, gp_health_entry *out, size_t max, size_t *n);

int gp_monitor_health(gp_monitor *m, gp_health_entry *out, size_t max, size_t *n)
{
    pthread_mutex_lock(&m->mu);
    int st = health_locked(m, out, max, n);
    pthread_mutex_unlock(&m->mu);
    return st;
}

static int health_locked(gp_monitor *m, gp_health_entry *out, size_t max, size_t *n)
{
    int gpus = 0, degraded = 0;
    for (int b = 0; b < m->nbk; b++) {
        const mbk *k = &m->bk[b];
        if ((size_t)b < max) out[b] = k->health;
        if (!k->ops->is_gpu || !k->state) continue;
        int present = 0, lost = 0;
        for (size_t j = 0; j < m->devs.n; j++)
            if (m->devs.v[j].bk == b) {
                if (m->devs.v[j].info.present)
                    present++;
                else
                    lost++;
            }
        gpus += present;
        if (present + lost > 0 && (k->health.state != GP_HEALTH_OK || lost)) degraded = 1;
    }
    if (n) *n = (size_t)m->nbk;
    if (!gpus) return GP_HEALTH_UNAVAILABLE;
    return degraded ? GP_HEALTH_DEGRADED : GP_HEALTH_OK;
}

static int is_gpu(const gp_dev_info *d)
{
    return d->present && !strcmp(d->kind, "gpu") && strcmp(d->backend, "opencl");
}

size_t gp_monitor_gpu_count(gp_monitor *m)
{
    size_t g = 0;
    pthread_mutex_lock(&m->mu);
    for (size_t i = 0; i < m->devs.n; i++) g += is_gpu(&m->devs.v[i].info);
    pthread_mutex_unlock(&m->mu);
    return g;
}

int gp_monitor_open_event_log(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    open_log_locked(m);
    int open = m->log_open;
    pthread_mutex_unlock(&m->mu);
    return open;
}

uint64_t gp_monitor_generation(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    uint64_t g = m->generation;
    pthread_mutex_unlock(&m->mu);
    return g;
}

int gp_monitor_view(gp_monitor *m, gp_mon_view *v)
{
    int rc = 0;
    pthread_mutex_lock(&m->mu);
    if (v->valid && v->generation == m->generation) {
        rc = 1;
        goto out;
    }
    size_t nd = m->devs.n;
    if (nd > v->cap) {
        size_t cap = nd;
        gp_dev_info *info = realloc(v->info, cap * sizeof *info);
        if (info) v->info = info;
        gp_dev_sample *smp = realloc(v->sample, cap * sizeof *smp);
        if (smp) v->sample = smp;
        int *have = realloc(v->have, cap * sizeof *have);
        if (have) v->have = have;
        int *np = realloc(v->nprocs, cap * sizeof *np);
        if (np) v->nprocs = np;
        gp_dev_proc *pr = realloc(v->procs, cap * GP_MAX_PROCS * sizeof *pr);
        if (pr) v->procs = pr;
        unsigned char *lv = realloc(v->level, cap * GP_ALERT__COUNT);
        if (lv) v->level = lv;
        if (!info || !smp || !have || !np || !pr || !lv) {
            rc = GP_ENOMEM;
            goto out;
        }
        v->cap = cap;
    }
    v->ndev = nd;
    v->gpus = 0;
    for (size_t i = 0; i < nd; i++) {
        const mdev *d = &m->devs.v[i];
        v->info[i] = d->info;
        v->have[i] = d->have_last;
        if (d->have_last) v->sample[i] = d->last;
        v->nprocs[i] = d->have_last ? d->nprocs : 0;
        memcpy(&v->procs[i * GP_MAX_PROCS], d->procs, (size_t)v->nprocs[i] * sizeof *d->procs);
        for (int k = 0; k < GP_ALERT__COUNT; k++)
            v->level[i * GP_ALERT__COUNT + k] =
                (unsigned char)gp_alerts_level(m->alerts, (int)i, k);
        v->gpus += is_gpu(&d->info);
    }
    for (int k = 0; k < GP_ALERT__COUNT; k++) {
        v->alerts[k][0] = gp_alerts_count(m->alerts, k);
        for (int l = 1; l <= 2; l++) v->alerts[k][l] = gp_alerts_count_level(m->alerts, k, l);
    }
    v->overall = health_locked(m, v->health, sizeof v->health / sizeof v->health[0], &v->nhealth);
    if (v->nhealth > sizeof v->health / sizeof v->health[0])
        v->nhealth = sizeof v->health / sizeof v->health[0];
    v->edges = gp_sessions_hist_edges(&v->nedges);
    memcpy(v->inf_hist, m->inf_hist, sizeof v->inf_hist);
    v->inf_count = m->inf_count;
    v->inf_sum_ms = m->inf_sum_ms;
    v->ticks = m->ticks;
    v->sessions_started = m->sessions_started;
    v->last_tick_wall_ns = m->last_tick_wall_ns;
    v->generation = m->generation;
    v->valid = 1;
out:
    pthread_mutex_unlock(&m->mu);
    return rc;
}

void gp_mon_view_free(gp_mon_view *v)
{
    free(v->info);
    free(v->sample);
    free(v->have);
    free(v->nprocs);
    free(v->procs);
    free(v->level);
    memset(v, 0, sizeof *v);
}

int gp_monitor_on_event(gp_monitor *m, gp_event_cb cb, void *user)
{
    pthread_mutex_lock(&m->mu);
    int rc = gp_alerts_on_event(m->alerts, cb, user);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

uint64_t gp_monitor_alert_count(gp_monitor *m, int kind)
{
    pthread_mutex_lock(&m->mu);
    uint64_t n = gp_alerts_count(m->alerts, kind);
    pthread_mutex_unlock(&m->mu);
    return n;
}

void gp_monitor_count_session(gp_monitor *m)
{
    pthread_mutex_lock(&m->mu);
    m->sessions_started++;
    m->generation++;
    pthread_mutex_unlock(&m->mu);
}

int gp_monitor_session_start(gp_monitor *m, const char *name, const char *description)
{
    pthread_mutex_lock(&m->mu);
    gp_err err = {0};
    int rc = gp_sessions_start(m->sessions, name, description, gp_clock_wall_ns(), &err);
    if (!rc) {
        m->sessions_started++;
        m->generation++;
        open_log_locked(m);
        emit(m, GP_EV_SESSION_STARTED, "session %s started", name);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int gp_monitor_session_stop(gp_monitor *m, const char *name)
{
    pthread_mutex_lock(&m->mu);
    int rc = session_stop_locked(m, name);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int gp_monitor_snapshot(gp_monitor *m, const char *name, const char *reason)
{
    pthread_mutex_lock(&m->mu);
    size_t nd = m->devs.n;
    int rc = GP_ENOMEM;
    if (!GP_VEC_RESERVE(m->s_info, nd) && !GP_VEC_RESERVE(m->s_sample, nd) &&
        !GP_VEC_RESERVE(m->s_have, nd)) {
        for (size_t i = 0; i < nd; i++) {
            m->s_info.v[i] = m->devs.v[i].info;
            m->s_sample.v[i] = m->devs.v[i].last;
            m->s_have.v[i] = m->devs.v[i].have_last;
        }
        rc = gp_sessions_snapshot(m->sessions, name, reason, gp_clock_wall_ns(), nd, m->s_info.v,
                                  m->s_sample.v, m->s_have.v);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

int gp_monitor_track_inference(gp_monitor *m, const char *name, double ms)
{
    pthread_mutex_lock(&m->mu);
    int rc = gp_sessions_track(m->sessions, name, ms);
    if (rc == 0) { /* once per observation, however many sessions keep it */
        size_t ne;
        const double *edges = gp_sessions_hist_edges(&ne);
        size_t j = 0;
        while (j < ne && ms > edges[j]) j++;
        m->inf_hist[j]++;
        m->inf_count++;
        m->inf_sum_ms += ms;
        m->generation++;
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

size_t gp_monitor_sessions(gp_monitor *m, gp_session_info *out, size_t max)
{
    pthread_mutex_lock(&m->mu);
    size_t n = gp_sessions_list(m->sessions, out, max);
    pthread_mutex_unlock(&m->mu);
    return n;
}

char *gp_monitor_session_report(gp_monitor *m, const char *name)
{
    gp_sbuf b = {0};
    pthread_mutex_lock(&m->mu);
    int rc = gp_sessions_report(m->sessions, name, m->alerts, &b);
    pthread_mutex_unlock(&m->mu);
    if (rc) {
        gp_sbuf_free(&b);
        return NULL;
    }
    gp_sbuf_cstr(&b);
    return b.s; /* the caller frees */
}
