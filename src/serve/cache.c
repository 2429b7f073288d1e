/* serve/cache.c: the trace cache of `gpuprof serve` (see cache.h). One
 * mutex guards the entries; a load runs outside it (the entry is marked
 * loading and other users wait on the condition variable). */
#include "serve/cache.h"
#include "trace/sanitize.h"
#include "core/clock.h"
#include "core/hash.h"
#include "core/strtab.h"
#include "store/store.h"
#include "trace/args_source.h"
#include "trace/load.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { ST_UNLOADED, ST_LOADING, ST_READY, ST_ERROR };
/* A trace is loaded with its args at the source (trace/args_source.h); their
 * text is read in by the first request that needs it (gp_tentry_args). */
enum { ARGS_AT_SOURCE, ARGS_READING, ARGS_READ, ARGS_FAILED };
static const char *const state_names[] = {"unloaded", "loading", "ready", "error"};

#define BODIES_MAX 64

typedef struct fsig {
    dev_t dev;
    ino_t ino;
    off_t size;
    int64_t mtime_ns;
} fsig;

typedef struct body {
    char *key;
    gp_sbuf b; /* the bytes; owned by aux when aux is set */
    void *aux; /* the server's made answer (gp_tcache_aux_ops), or NULL */
} body;

struct gp_tentry {
    char id[16];
    char *name;       /* as the operator gave it */
    char *shown;      /* the name shown (sanitized with --redact) */
    char *root;       /* realpath of a served folder, or NULL */
    const char *kind; /* "file", "folder", "store-run" */
    int state;
    char error[512];
    char **files; /* expanded at the last load */
    size_t nfiles;
    fsig *sigs;
    uint64_t total_bytes;
    _Atomic(uint64_t) read_bytes;
    gp_trace **traces;
    size_t n;
    size_t *tfile;  /* index in files of each trace */
    int args_state; /* ARGS_*: the traces' args text (timeline export) */
    uint64_t trace_bytes, body_bytes;
    body bodies[BODIES_MAX];
    size_t nbodies, next_body;
    uint64_t last_use;
    int64_t checked_ns;  /* last look at the files on disk */
    char *computing[16]; /* keys a request is computing now (others wait) */
    int refs;
};

struct gp_tcache {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    gp_tentry **e;
    size_t n, cap;
    uint64_t limit, used, tick;
    gp_tcache_aux_ops aux; /* make == NULL: none */
    int redact;
    unsigned keep;
};

uint64_t gp_trace_mem_bytes(const gp_trace *t)
{
    uint64_t b = sizeof *t + gp_strtab_bytes(t->strings);
#define V(f) b += (uint64_t)t->f.cap * sizeof *t->f.v
    V(cats);
    V(tracks);
    V(slices);
    V(gpu_info);
    V(flows);
    V(instants);
    V(mem_events);
    V(counters);
    V(series);
    V(devices);
    V(arg_streams);
    V(entry_metrics);
    V(inline_children);
    V(tracked_buffers);
    V(args_text);
    V(slice_args);
    V(instant_args);
#undef V
    return b;
}

gp_tcache *gp_tcache_create(uint64_t mem_bytes)
{
    gp_tcache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    c->limit = mem_bytes;
    return c;
}

/* Frees a kept body: its made answer lives on while a request still sends
 * it (the answer frees the bytes with its last reference). */
static void body_free(gp_tcache *c, body *b)
{
    free(b->key);
    b->key = NULL;
    if (b->aux) {
        c->aux.unref(b->aux);
        b->aux = NULL;
        memset(&b->b, 0, sizeof b->b);
    } else {
        gp_sbuf_free(&b->b);
    }
}

void gp_tcache_set_aux(gp_tcache *c, const gp_tcache_aux_ops *ops)
{
    pthread_mutex_lock(&c->mu);
    c->aux = *ops;
    pthread_mutex_unlock(&c->mu);
}

static void drop_loaded(gp_tcache *c, gp_tentry *e)
{
    for (size_t i = 0; i < e->n; i++) gp_trace_destroy(e->traces[i]);
    free(e->traces);
    e->traces = NULL;
    free(e->tfile);
    e->tfile = NULL;
    e->args_state = ARGS_AT_SOURCE;
    e->n = 0;
    for (size_t i = 0; i < e->nbodies; i++) body_free(c, &e->bodies[i]);
    e->nbodies = e->next_body = 0;
    c->used -= e->trace_bytes + e->body_bytes;
    e->trace_bytes = e->body_bytes = 0;
}

static void free_files(gp_tentry *e)
{
    gp_paths_free(e->files);
    e->files = NULL;
    free(e->sigs);
    e->sigs = NULL;
    e->nfiles = 0;
}

void gp_tcache_destroy(gp_tcache *c)
{
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) {
        gp_tentry *e = c->e[i];
        drop_loaded(c, e);
        free_files(e);
        for (int k = 0; k < 16; k++) free(e->computing[k]);
        free(e->name);
        free(e->shown);
        free(e->root);
        free(e);
    }
    free(c->e);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    free(c);
}

/* Expands the entry's name into files; for a folder every file must lie in
 * it (symlinks out of it are refused). Fills sigs. */
static int expand(gp_tentry *e, gp_err *err)
{
    char *p = e->name;
    size_t n = 0;
    char **files = gp_paths_expand(&p, 1, &n, err);
    if (!files) return err->code ? err->code : GP_EIO;
    fsig *sigs = calloc(n + 1, sizeof *sigs);
    if (!sigs) {
        gp_paths_free(files);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        char *db = NULL;
        int64_t run;
        const char *f = files[i];
        if (gp_store_spec(f, &db, &run)) f = db;
        if (e->root) {
            char rp[PATH_MAX];
            size_t rl = strlen(e->root);
            if (!realpath(f, rp) || strncmp(rp, e->root, rl) || rp[rl] != '/') {
                gp_err_set(err, GP_EINVAL, "%s: lies outside the served folder %s", files[i],
                           e->name);
                free(db);
                free(sigs);
                gp_paths_free(files);
                return GP_EINVAL;
            }
        }
        struct stat st;
        if (stat(f, &st)) {
            gp_err_set(err, GP_EIO, "%s: %s", files[i], strerror(errno));
            free(db);
            free(sigs);
            gp_paths_free(files);
            return GP_EIO;
        }
        sigs[i] = (fsig){st.st_dev, st.st_ino, st.st_size,
                         (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
        total += (uint64_t)st.st_size;
        free(db);
    }
    free_files(e);
    e->files = files;
    e->sigs = sigs;
    e->nfiles = n;
    e->total_bytes = total;
    return 0;
}

/* 1 when the files on disk differ from those loaded (or cannot be read). */
static int changed(const gp_tentry *e)
{
    gp_tentry probe;
    memset(&probe, 0, sizeof probe);
    probe.name = e->name;
    probe.root = e->root;
    gp_err err = {0};
    if (expand(&probe, &err)) return 1;
    int diff = probe.nfiles != e->nfiles;
    for (size_t i = 0; !diff && i < e->nfiles; i++)
        diff = strcmp(probe.files[i], e->files[i]) ||
               memcmp(&probe.sigs[i], &e->sigs[i], sizeof(fsig)) != 0;
    free_files(&probe);
    return diff;
}

int gp_tcache_add(gp_tcache *c, const char *name, char *id_out, gp_err *err)
{
    uint64_t h = gp_hash_bytes(name, strlen(name));
    char id[16];
    snprintf(id, sizeof id, "%08x", (unsigned)(h ^ (h >> 32)));
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < c->n; i++) {
        if (!strcmp(c->e[i]->name, name)) {
            if (id_out) snprintf(id_out, 16, "%s", c->e[i]->id);
            pthread_mutex_unlock(&c->mu);
            return 0;
        }
        if (!strcmp(c->e[i]->id, id)) /* a collision: the next free id */
            snprintf(id, sizeof id, "%08x", (unsigned)(h = gp_hash_u64(h)));
    }
    pthread_mutex_unlock(&c->mu);
    gp_tentry *e = calloc(1, sizeof *e);
    if (!e || !(e->name = strdup(name))) {
        free(e);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    snprintf(e->id, sizeof e->id, "%s", id);
    struct stat st;
    char *db = NULL;
    int64_t run;
    if (gp_store_spec(name, &db, &run)) {
        e->kind = "store-run";
    } else if (stat(name, &st) == 0 && S_ISDIR(st.st_mode)) {
        char rp[PATH_MAX];
        e->kind = "folder";
        if (realpath(name, rp)) e->root = strdup(rp);
    } else {
        e->kind = "file";
    }
    free(db);
    int rc = expand(e, err);
    if (rc) {
        free_files(e);
        free(e->root);
        free(e->name);
        free(e);
        return rc;
    }
    if (c->redact) e->shown = gp_sanitize_str(name, c->keep);
    pthread_mutex_lock(&c->mu);
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        gp_tentry **ne = realloc(c->e, cap * sizeof *ne);
        if (!ne) {
            pthread_mutex_unlock(&c->mu);
            free_files(e);
            free(e->root);
            free(e->name);
            free(e->shown);
            free(e);
            return gp_err_set(err, GP_ENOMEM, "out of memory");
        }
        c->e = ne;
        c->cap = cap;
    }
    c->e[c->n++] = e;
    pthread_mutex_unlock(&c->mu);
    if (id_out) snprintf(id_out, 16, "%s", e->id);
    return 0;
}

/* Frees loaded entries nobody holds until the cache fits its budget: first
 * one that alone is larger than the budget (it cannot be kept anyway), else
 * the least recently used. keep is never dropped; while keep alone is larger
 * than the budget nothing else is dropped for it (it goes at its release).
 * Called locked. */
static void evict(gp_tcache *c, const gp_tentry *keep)
{
    if (keep && keep->trace_bytes + keep->body_bytes > c->limit) return;
    while (c->limit && c->used > c->limit) {
        gp_tentry *lru = NULL;
        for (size_t i = 0; i < c->n; i++) {
            gp_tentry *e = c->e[i];
            if (e == keep || e->refs || e->state != ST_READY) continue;
            if (e->trace_bytes + e->body_bytes > c->limit) {
                lru = e;
                break;
            }
            if (!lru || e->last_use < lru->last_use) lru = e;
        }
        if (!lru) return;
        drop_loaded(c, lru);
        lru->state = ST_UNLOADED;
    }
}

/* Loads e (state ST_LOADING, not locked; the files are swapped in locked). */
static int load(gp_tcache *c, gp_tentry *e, gp_trace ***out, size_t **tfile, size_t *nout,
                gp_err *err)
{
    gp_tentry probe;
    memset(&probe, 0, sizeof probe);
    probe.name = e->name;
    probe.root = e->root;
    int rc = expand(&probe, err);
    if (rc) return rc;
    pthread_mutex_lock(&c->mu);
    free_files(e);
    e->files = probe.files;
    e->sigs = probe.sigs;
    e->nfiles = probe.nfiles;
    e->total_bytes = probe.total_bytes;
    atomic_store(&e->read_bytes, 0);
    e->checked_ns = gp_clock_mono_ns();
    pthread_mutex_unlock(&c->mu);
    /* e->files stays as it is while the entry is loading */
    gp_trace **t = calloc(e->nfiles + 1, sizeof *t);
    size_t *tf = calloc(e->nfiles + 1, sizeof *tf);
    if (!t || !tf) {
        free(t);
        free(tf);
        return gp_err_set(err, GP_ENOMEM, "out of memory");
    }
    /* the timeline body is the lossless Chrome export, byte for byte the one
     * of `gpuprof timeline -o X.json`, which repeats every event's args text:
     * only where it lies is kept now, the text is read when a timeline is
     * asked for (gp_tentry_args), so that a first summary costs what the
     * command's does */
    rc = gp_load_many_ex(e->files, e->nfiles, 0, GP_LOAD_ARGS_AT_SOURCE, t, err, &e->read_bytes);
    if (rc) {
        free(t);
        free(tf);
        return rc;
    }
    /* as the commands do: in a folder, JSON files without an event array
     * (expected results beside the traces) are no traces */
    size_t k = 0;
    for (size_t i = 0; i < e->nfiles; i++) {
        if (e->nfiles > 1 && !t[i]->meta.has_trace_events) {
            gp_trace_destroy(t[i]);
            continue;
        }
        tf[k] = i;
        t[k++] = t[i];
    }
    if (!k) {
        free(t);
        free(tf);
        return gp_err_set(err, GP_EINVAL, "%s: no trace with a \"traceEvents\" array found",
                          gp_tentry_name(e));
    }
    for (size_t i = 0; c->redact && i < k; i++)
        if (gp_sanitize_trace(t[i], c->keep)) {
            for (size_t j = 0; j < k; j++) gp_trace_destroy(t[j]);
            free(t);
            free(tf);
            return gp_err_set(err, GP_ENOMEM, "out of memory");
        }
    *out = t;
    *tfile = tf;
    *nout = k;
    return 0;
}

int gp_tcache_acquire(gp_tcache *c, const char *id, gp_tentry **out, gp_err *err)
{
    pthread_mutex_lock(&c->mu);
    gp_tentry *e = NULL;
    for (size_t i = 0; i < c->n && !e; i++)
        if (!strcmp(c->e[i]->id, id)) e = c->e[i];
    if (!e) {
        pthread_mutex_unlock(&c->mu);
        return gp_err_set(err, GP_ENOTFOUND, "no trace with id '%.16s'", id);
    }
    while (e->state == ST_LOADING) pthread_cond_wait(&c->cv, &c->mu);
    /* a changed file: reload when nobody uses the loaded traces (checked at
     * most once a second per trace) */
    int64_t now = gp_clock_mono_ns();
    if ((e->state == ST_READY || e->state == ST_ERROR) && now - e->checked_ns > 1000000000LL) {
        e->checked_ns = now;
        int ch = changed(e);
        if (ch && e->refs == 0 && e->state == ST_READY) {
            drop_loaded(c, e);
            e->state = ST_UNLOADED;
        } else if (ch && e->state == ST_ERROR) {
            e->state = ST_UNLOADED;
        }
    }
    if (e->state == ST_ERROR) {
        gp_err_set(err, GP_EINVAL, "%s", e->error);
        pthread_mutex_unlock(&c->mu);
        return GP_EINVAL;
    }
    if (e->state == ST_UNLOADED) {
        e->state = ST_LOADING;
        pthread_mutex_unlock(&c->mu);
        gp_trace **t = NULL;
        size_t *tf = NULL, n = 0;
        int rc = load(c, e, &t, &tf, &n, err);
        pthread_mutex_lock(&c->mu);
        if (rc) {
            e->state = ST_ERROR;
            snprintf(e->error, sizeof e->error, "%s", err->msg);
            pthread_cond_broadcast(&c->cv);
            pthread_mutex_unlock(&c->mu);
            return rc;
        }
        e->traces = t;
        e->tfile = tf;
        e->args_state = ARGS_AT_SOURCE;
        e->n = n;
        e->trace_bytes = 0;
        for (size_t i = 0; i < n; i++) e->trace_bytes += gp_trace_mem_bytes(t[i]);
        c->used += e->trace_bytes;
        e->state = ST_READY;
        pthread_cond_broadcast(&c->cv);
    }
    e->refs++;
    e->last_use = ++c->tick;
    evict(c, e);
    pthread_mutex_unlock(&c->mu);
    *out = e;
    return 0;
}

void gp_tcache_release(gp_tcache *c, gp_tentry *e)
{
    pthread_mutex_lock(&c->mu);
    e->refs--;
    evict(c, NULL);
    pthread_mutex_unlock(&c->mu);
}

int gp_tentry_args(gp_tcache *c, gp_tentry *e, gp_err *err)
{
    pthread_mutex_lock(&c->mu);
    while (e->args_state == ARGS_READING) pthread_cond_wait(&c->cv, &c->mu);
    if (e->args_state == ARGS_READ || e->args_state == ARGS_FAILED) {
        int failed = e->args_state == ARGS_FAILED;
        pthread_mutex_unlock(&c->mu);
        return failed ? gp_err_set(err, GP_ENOMEM, "%s: out of memory sanitizing the args",
                                   gp_tentry_name(e))
                      : 0;
    }
    e->args_state = ARGS_READING;
    pthread_mutex_unlock(&c->mu);
    /* held (refs > 0): the traces and files stay; only this thread writes
     * their args (every reader of the args text waits above first) */
    int rc = 0, broken = 0;
    uint64_t before = 0, after = 0;
    for (size_t i = 0; i < e->n && !rc; i++) {
        gp_trace *t = e->traces[i];
        if (!t->meta.args_at_source) continue; /* a run of a store: no args text */
        const fsig *g = &e->sigs[e->tfile[i]];
        struct stat want;
        memset(&want, 0, sizeof want);
        want.st_dev = g->dev;
        want.st_ino = g->ino;
        want.st_size = g->size;
        want.st_mtim.tv_sec = (time_t)(g->mtime_ns / 1000000000LL);
        want.st_mtim.tv_nsec = (long)(g->mtime_ns % 1000000000LL);
        before += gp_trace_mem_bytes(t);
        rc = gp_trace_args_read(t, e->files[e->tfile[i]], &want, err);
        /* --redact: the args text is sanitized as the rest was at load */
        if (!rc && c->redact && gp_sanitize_args(t, c->keep)) {
            /* the args are dropped: this copy never writes the timeline */
            rc = gp_err_set(err, GP_ENOMEM, "%s: out of memory sanitizing the args",
                            gp_tentry_name(e));
            broken = 1;
        }
        after += gp_trace_mem_bytes(t);
    }
    pthread_mutex_lock(&c->mu);
    e->trace_bytes += after - before;
    c->used += after - before;
    if (rc) {
        e->args_state = broken ? ARGS_FAILED : ARGS_AT_SOURCE;
        /* a file that changed since the load: the next acquire looks at the
         * files at once and reads them again when nobody holds the traces */
        if (rc == GP_ESTATE) e->checked_ns = 0;
    } else {
        e->args_state = ARGS_READ;
        evict(c, e);
    }
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    return rc;
}

gp_trace *const *gp_tentry_traces(const gp_tentry *e, size_t *n)
{
    *n = e->n;
    return e->traces;
}

const char *gp_tentry_name(const gp_tentry *e)
{
    return e->shown ? e->shown : e->name;
}

void gp_tcache_set_redact(gp_tcache *c, int on, unsigned keep)
{
    c->redact = on;
    c->keep = keep;
}

int gp_tentry_body_get(gp_tcache *c, gp_tentry *e, const char *key, gp_sbuf *out)
{
    pthread_mutex_lock(&c->mu);
    for (;;) {
        for (size_t i = 0; i < e->nbodies; i++)
            if (!strcmp(e->bodies[i].key, key)) {
                gp_sbuf_add(out, e->bodies[i].b.s, e->bodies[i].b.n);
                pthread_mutex_unlock(&c->mu);
                return 1;
            }
        /* the same result being computed by another request: wait for it */
        int busy = 0, slot = -1;
        for (int i = 0; i < 16; i++) {
            if (e->computing[i] && !strcmp(e->computing[i], key)) busy = 1;
            if (!e->computing[i] && slot < 0) slot = i;
        }
        if (!busy) {
            if (slot >= 0) e->computing[slot] = strdup(key); /* NULL: computed unclaimed */
            pthread_mutex_unlock(&c->mu);
            return 0;
        }
        pthread_cond_wait(&c->cv, &c->mu);
    }
}

/* Ends this request's claim on key (locked). */
static void unclaim(gp_tcache *c, gp_tentry *e, const char *key)
{
    for (int i = 0; i < 16; i++)
        if (e->computing[i] && !strcmp(e->computing[i], key)) {
            free(e->computing[i]);
            e->computing[i] = NULL;
            pthread_cond_broadcast(&c->cv);
            return;
        }
}

void gp_tentry_body_abandon(gp_tcache *c, gp_tentry *e, const char *key)
{
    pthread_mutex_lock(&c->mu);
    unclaim(c, e, key);
    pthread_mutex_unlock(&c->mu);
}

int gp_tcache_peek(gp_tcache *c, const char *id, const char *key, gp_sbuf *out, void **aux)
{
    int found = 0;
    int64_t now = gp_clock_mono_ns();
    pthread_mutex_lock(&c->mu);
    gp_tentry *e = NULL;
    for (size_t i = 0; i < c->n && !e; i++)
        if (!strcmp(c->e[i]->id, id)) e = c->e[i];
    if (e && e->state == ST_READY && now - e->checked_ns > 1000000000LL) {
        /* the once-a-second look at the files, here too: a kept body is
         * only served while its files are unchanged */
        e->checked_ns = now;
        if (changed(e)) e->checked_ns = 0; /* the full path reloads it */
    }
    if (e && e->state == ST_READY && e->checked_ns)
        for (size_t i = 0; i < e->nbodies; i++)
            if (!strcmp(e->bodies[i].key, key)) {
                if (aux && e->bodies[i].aux) {
                    c->aux.ref(e->bodies[i].aux);
                    *aux = e->bodies[i].aux;
                } else {
                    gp_sbuf_add(out, e->bodies[i].b.s, e->bodies[i].b.n);
                }
                e->last_use = ++c->tick;
                found = 1;
                break;
            }
    pthread_mutex_unlock(&c->mu);
    return found;
}

void gp_tentry_body_put(gp_tcache *c, gp_tentry *e, const char *key, const gp_sbuf *b, int kind)
{
    char *k = strdup(key);
    if (!k) return;
    gp_sbuf copy = {0};
    gp_sbuf_add(&copy, b->s, b->n);
    /* the answer made outside the lock (an HTML page's hashes take a while) */
    pthread_mutex_lock(&c->mu);
    gp_tcache_aux_ops ops = c->aux;
    pthread_mutex_unlock(&c->mu);
    size_t cap = copy.cap;
    void *aux = ops.make && copy.s ? ops.make(ops.user, copy.s, copy.n, kind) : NULL;
    pthread_mutex_lock(&c->mu);
    for (size_t i = 0; i < e->nbodies; i++)
        if (!strcmp(e->bodies[i].key, key)) { /* computed twice concurrently */
            unclaim(c, e, key);
            pthread_mutex_unlock(&c->mu);
            free(k);
            if (aux)
                ops.unref(aux);
            else
                gp_sbuf_free(&copy);
            return;
        }
    body *slot;
    if (e->nbodies < BODIES_MAX) {
        slot = &e->bodies[e->nbodies++];
    } else { /* replace the oldest */
        slot = &e->bodies[e->next_body];
        e->next_body = (e->next_body + 1) % BODIES_MAX;
        e->body_bytes -= slot->b.cap + strlen(slot->key);
        c->used -= slot->b.cap + strlen(slot->key);
        body_free(c, slot);
    }
    slot->key = k;
    slot->b = copy;
    slot->b.cap = cap;
    slot->aux = aux;
    e->body_bytes += cap + strlen(k);
    c->used += cap + strlen(k);
    unclaim(c, e, key);
    evict(c, e);
    pthread_mutex_unlock(&c->mu);
}

void gp_tcache_list_json(gp_tcache *c, gp_sbuf *b)
{
    pthread_mutex_lock(&c->mu);
    gp_sbuf_puts(b, "{\"traces\":[");
    for (size_t i = 0; i < c->n; i++) {
        const gp_tentry *e = c->e[i];
        gp_sbuf_puts(b, i ? ",{" : "{");
        gp_json_key(b, "id", 0);
        gp_json_str(b, e->id);
        gp_json_key(b, "name", 1);
        gp_json_str(b, gp_tentry_name(e));
        gp_json_key(b, "kind", 1);
        gp_json_str(b, e->kind);
        gp_json_key(b, "files", 1);
        gp_json_int(b, (int64_t)e->nfiles);
        gp_json_key(b, "state", 1);
        gp_json_str(b, state_names[e->state]);
        /* percent of the bytes read; 100 only once loaded */
        double pct = 0;
        if (e->state == ST_READY)
            pct = 100;
        else if (e->state == ST_LOADING && e->total_bytes) {
            pct = 100.0 * (double)atomic_load(&e->read_bytes) / (double)e->total_bytes;
            if (pct > 99) pct = 99;
        }
        gp_json_key(b, "percent", 1);
        gp_json_num(b, e->state == ST_UNLOADED || e->state == ST_ERROR ? 0 : (double)(int)pct);
        gp_json_key(b, "bytes", 1);
        gp_json_int(b, (int64_t)e->total_bytes);
        gp_json_key(b, "memory_bytes", 1);
        gp_json_int(b, (int64_t)(e->trace_bytes + e->body_bytes));
        gp_json_key(b, "error", 1);
        if (e->state == ST_ERROR && c->redact) {
            char *m = gp_sanitize_str(e->error, c->keep);
            gp_json_str(b, m);
            free(m);
        } else if (e->state == ST_ERROR) {
            gp_json_str(b, e->error);
        } else
            gp_sbuf_puts(b, "null");
        gp_sbuf_putc(b, '}');
    }
    gp_sbuf_puts(b, "]");
    gp_json_key(b, "cache_bytes", 1);
    gp_json_int(b, (int64_t)c->used);
    gp_json_key(b, "cache_limit_bytes", 1);
    gp_json_int(b, (int64_t)c->limit);
    gp_sbuf_puts(b, "}\n");
    pthread_mutex_unlock(&c->mu);
}
