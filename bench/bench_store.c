/* bench/bench_store.c: sustained events/s into the SQLite run store through
 * the writer thread. Usage: bench_store [EVENTS [PRODUCERS [QUEUE]]]
 * (default 4 M, 2, all events). Producers queue launch+kernel pairs as fast
 * as they can, waiting while QUEUE events are queued (so that a long run
 * holds a bounded queue); the time runs until the writer has committed
 * everything (commit_s) and closed the store, whose last checkpoint copies
 * the rest of the WAL into it (total_s; gp_store_writer_stop). */
#include "core/clock.h"
#include "store/store.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct arg {
    gp_store_writer *w;
    int idx;
    long n;
} arg;

static void *produce(void *p)
{
    arg *a = p;
    uint32_t th = gp_store_writer_track(a->w, GP_STORE_TRACK_THREAD, a->idx, -1, NULL);
    uint32_t q = gp_store_writer_track(a->w, GP_STORE_TRACK_QUEUE, a->idx, 0, "stream");
    uint32_t cat = gp_store_writer_str(a->w, "cuda_runtime");
    uint32_t ln = gp_store_writer_str(a->w, "cudaLaunchKernel");
    uint32_t kn = gp_store_writer_str(a->w, "void gemm_kernel<128, 64>(float const*, float*)");
    gp_store_ev ev[256];
    for (long i = 0; i < a->n; i += 256) {
        int m = a->n - i < 256 ? (int)(a->n - i) : 256;
        for (int k = 0; k < m; k++) {
            long j = i + k;
            gp_store_ev *e = &ev[k];
            gp_store_ev_init(e, (j & 1) ? GP_ST_KERNEL : GP_ST_API);
            e->track = (j & 1) ? q : th;
            e->cat = cat;
            e->name = (j & 1) ? kn : ln;
            e->ts = 1000000 + j * 700;
            e->dur = (j & 1) ? 5000 : 600;
            e->corr = j / 2;
            e->device = 0;
            e->stream = a->idx;
            e->grid[0] = 128;
            e->block[0] = 256;
        }
        gp_store_writer_put(a->w, ev, (size_t)m);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long total = argc > 1 ? atol(argv[1]) : 4000000;
    int np = argc > 2 ? atoi(argv[2]) : 2;
    long queue = argc > 3 ? atol(argv[3]) : 0;
    if (np < 1 || np > 64 || total < np || queue < 0) return 2;
    char path[256];
    snprintf(path, sizeof path, "/tmp/gp_bench_store_%d.db", (int)getpid());
    gp_err err = {0};
    gp_store *s;
    if (gp_store_open(path, &s, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    gp_store_run_info ri = {"bench_store", "host", gp_clock_wall_ns(), gp_clock_mono_ns(), 0};
    int64_t run = gp_store_run_begin(s, &ri, &err);
    gp_store_close(s);
    gp_store_writer_opts o = {100, queue ? (size_t)queue : (size_t)total + 1, "bench"};
    int64_t t0 = gp_clock_mono_ns();
    gp_store_writer *w = gp_store_writer_start(path, run, &o, &err);
    if (!w) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    if (queue) gp_store_writer_set_bounded(w, 0); /* producers wait, nothing dropped */
    pthread_t th[64];
    arg a[64];
    for (int i = 0; i < np; i++) {
        a[i] = (arg){w, i, total / np};
        pthread_create(&th[i], NULL, produce, &a[i]);
    }
    for (int i = 0; i < np; i++) pthread_join(th[i], NULL);
    int64_t t_put = gp_clock_mono_ns();
    uint64_t dropped = gp_store_writer_dropped(w);
    gp_store_writer_flush(w); /* everything committed (in the WAL) */
    int64_t t_commit = gp_clock_mono_ns();
    int rc = gp_store_writer_stop(w); /* closing checkpoints the WAL into the store */
    int64_t t1 = gp_clock_mono_ns();
    long n = (total / np) * np;
    printf("events %ld producers %d dropped %llu queue_s %.3f total_s %.3f events_per_s %.0f rc %d "
           "commit_s %.3f close_s %.3f\n",
           n, np, (unsigned long long)dropped, (double)(t_put - t0) / 1e9, (double)(t1 - t0) / 1e9,
           (double)n / ((double)(t1 - t0) / 1e9), rc, (double)(t_commit - t0) / 1e9,
           (double)(t1 - t_commit) / 1e9);
    char x[300];
    unlink(path);
    snprintf(x, sizeof x, "%s-wal", path);
    unlink(x);
    snprintf(x, sizeof x, "%s-shm", path);
    unlink(x);
    return rc ? 1 : 0;
}
