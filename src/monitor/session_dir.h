/* monitor/session_dir.h: the sessions of an output folder as `gpuprof
 * session` leaves them: OUTPUT_DIR/NAME.pid while a session's background
 * sampler runs, OUTPUT_DIR/NAME.json (the report) once it stopped. */
#ifndef GP_MONITOR_SESSION_DIR_H
#define GP_MONITOR_SESSION_DIR_H
#include <stddef.h>
#include <sys/types.h>

/* 1 when n is a usable session name (1..63 of letters, digits, '.', '_',
 * '-', not starting with '.'), else 0. */
int gp_session_valid_name(const char *n);
/* The pid in DIR/NAME.pid when that process is alive, else 0. */
pid_t gp_session_running_pid(const char *dir, const char *name);

/* A report (NAME.json) in the folder. */
typedef struct gp_session_report {
    char name[64];
    long long mtime_ns;
} gp_session_report;
/* Fills out[0..max) with the reports in dir, oldest first by modification
 * time; returns their count. */
size_t gp_session_reports(const char *dir, gp_session_report *out, size_t max);

/* A session as listed by `gpuprof session list`. */
typedef struct gp_session_entry {
    char name[64];
    int running; /* 1: a sampler runs (counts unknown until its report; duration so far) */
    long long samples, snapshots, inferences;
    double duration_s; /* running: seconds since it started (-1 unknown) */
    char report[1200]; /* DIR/NAME.json of a finished session */
} gp_session_entry;
/* The running sessions (at most 64), then the finished ones oldest first.
 * Returns the count written to out[0..max). */
size_t gp_session_list(const char *dir, gp_session_entry *out, size_t max);

/* The contents of a file as a NUL-terminated string (free), or NULL. */
char *gp_session_slurp(const char *path);

/* The report of session name (DIR/NAME.json, the text `gpuprof session show
 * NAME --json` prints) as a NUL-terminated string (free); its path is
 * written to path[0..pn). NULL when there is none: *running is then 1 when
 * the session's sampler still runs (its report is written when it stops). */
char *gp_session_report_read(const char *dir, const char *name, char *path, size_t pn,
                             int *running);

#endif
