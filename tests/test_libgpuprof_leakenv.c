/* tests/test_libgpuprof_leakenv.c: GPUPROF_LEAK_REPORT=1 makes gp_default()
 * print its leak report at exit; without it nothing is printed. Each case
 * runs in a forked child (gp_default is created once per process, and this
 * parent never creates it). */
#include "test.h"
#include <fcntl.h>
#include <gpuprof/gpuprof.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs a child that tracks two buffers in gp_default(), untracks one and
 * exits; returns its stderr (caller frees) and exit status in *status. */
static char *run_child(const char *leak_env, int *status)
{
    char path[128];
    snprintf(path, sizeof path, "/tmp/gp_test_leakenv_%ld.err", (long)getpid());
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) _exit(90);
        dup2(fd, 2);
        close(fd);
        if (leak_env)
            setenv("GPUPROF_LEAK_REPORT", leak_env, 1);
        else
            unsetenv("GPUPROF_LEAK_REPORT");
        static char a[100], b[300];
        int64_t shape[2] = {10, 30};
        gp_profiler *p = gp_default();
        if (!p || gp_mem_track(p, "weights", a, sizeof a, NULL, 0, "uint8") ||
            gp_mem_track(p, "activations", b, sizeof b, shape, 2, "uint8") || gp_mem_untrack(p, a))
            _exit(91);
        exit(0); /* runs the atexit handlers */
    }
    *status = -1;
    if (pid < 0) return NULL;
    waitpid(pid, status, 0);
    FILE *f = fopen(path, "rb");
    char *s = calloc(1, 8192);
    if (f && s) {
        size_t k = fread(s, 1, 8191, f);
        s[k] = 0;
    }
    if (f) fclose(f);
    remove(path);
    return s;
}

TEST(leak_report_at_exit_opt_in)
{
    int st;
    char *err = run_child("1", &st);
    ASSERT(err);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ASSERT_CONTAINS(err, "gpuprof: 1 tracked buffer(s) never untracked");
    ASSERT_CONTAINS(err, "activations");
    ASSERT(!strstr(err, "weights")); /* untracked: not a leak */
    free(err);
}

TEST(no_report_by_default)
{
    int st;
    char *err = run_child(NULL, &st);
    ASSERT(err);
    ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ASSERT(!strstr(err, "never untracked"));
    free(err);
    err = run_child("0", &st);
    ASSERT(err);
    ASSERT(!strstr(err, "never untracked"));
    free(err);
}

TEST_MAIN(leak_report_at_exit_opt_in, no_report_by_default)
