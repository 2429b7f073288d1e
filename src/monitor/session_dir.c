/* monitor/session_dir.c: the sessions of an output folder as `gpuprof
 * session` leaves them: OUTPUT_DIR/NAME.pid while a session's sampler runs,
 * OUTPUT_DIR/NAME.json once it stopped. */
#include "monitor/session_dir.h"
#include "core/sbuf.h"
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* Returns the pid in DIR/NAME.pid when that process is alive, else 0. */
pid_t gp_session_running_pid(const char *dir, const char *name)
{
    char path[1200], buf[32] = "";
    snprintf(path, sizeof path, "%s/%s.pid", dir, name);
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    if (!fgets(buf, sizeof buf, f)) buf[0] = 0;
    fclose(f);
    pid_t pid = (pid_t)atol(buf);
    if (pid <= 0 || (kill(pid, 0) && errno == ESRCH)) return 0;
    return pid;
}

int gp_session_valid_name(const char *n)
{
    if (!n[0] || strlen(n) > 63 || n[0] == '.') return 0;
    for (const char *p = n; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
            return 0;
    return 1;
}

size_t gp_session_reports(const char *dir, gp_session_report *out, size_t max)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t k = strlen(e->d_name);
        if (k < 6 || k - 5 >= sizeof out->name || strcmp(e->d_name + k - 5, ".json")) continue;
        char path[1400];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        memcpy(out[n].name, e->d_name, k - 5);
        out[n].name[k - 5] = 0;
        out[n].mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        n++;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && out[j - 1].mtime_ns > out[j].mtime_ns; j--) {
            gp_session_report t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

static int json_i64(const char *text, const char *key, long long *v)
{
    char pat[80];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(text, pat);
    if (!p || sscanf(p + strlen(pat), "%lld", v) != 1) return 0;
    return 1;
}

char *gp_session_slurp(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f) return NULL;
    gp_sbuf b = {0};
    char buf[8192];
    size_t k;
    while ((k = fread(buf, 1, sizeof buf, f)) > 0) gp_sbuf_add(&b, buf, k);
    fclose(f);
    gp_sbuf_cstr(&b);
    return b.s;
}

char *gp_session_report_read(const char *dir, const char *name, char *path, size_t pn, int *running)
{
    *running = 0;
    snprintf(path, pn, "%s/%s.json", dir, name);
    char *text = gp_session_slurp(path);
    if (!text) *running = gp_session_running_pid(dir, name) != 0;
    return text;
}

size_t gp_session_list(const char *dir, gp_session_entry *out, size_t max)
{
    size_t n = 0;
    /* running sessions: pid files */
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && n < max && n < 64) {
        size_t k = strlen(e->d_name);
        if (k < 5 || k - 4 >= 64 || strcmp(e->d_name + k - 4, ".pid")) continue;
        gp_session_entry *s = &out[n];
        memset(s, 0, sizeof *s);
        memcpy(s->name, e->d_name, k - 4);
        s->name[k - 4] = 0;
        s->running = 1;
        /* running for: since its pid file was written (the session start) */
        char pf[1200];
        struct stat sb;
        snprintf(pf, sizeof pf, "%s/%s", dir, e->d_name);
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        s->duration_s = stat(pf, &sb) == 0 ? (double)(now.tv_sec - sb.st_mtim.tv_sec) +
                                                 (double)(now.tv_nsec - sb.st_mtim.tv_nsec) * 1e-9
                                           : -1;
        if (gp_session_running_pid(dir, s->name)) n++;
    }
    if (d) closedir(d);
    gp_session_report *reps = calloc(512, sizeof *reps);
    size_t nr = reps ? gp_session_reports(dir, reps, 512) : 0;
    for (size_t i = 0; i < nr && n < max; i++) {
        gp_session_entry *s = &out[n];
        memset(s, 0, sizeof *s);
        snprintf(s->report, sizeof s->report, "%s/%s.json", dir, reps[i].name);
        char *text = gp_session_slurp(s->report);
        if (!text) continue;
        long long start = 0, stop = 0;
        json_i64(text, "samples", &s->samples);
        json_i64(text, "snapshots", &s->snapshots);
        json_i64(text, "inference_count", &s->inferences);
        json_i64(text, "start_wall_ns", &start);
        json_i64(text, "stop_wall_ns", &stop);
        free(text);
        s->duration_s = stop > start ? (double)(stop - start) / 1e9 : 0;
        memcpy(s->name, reps[i].name, sizeof s->name);
        n++;
    }
    free(reps);
    return n;
}
