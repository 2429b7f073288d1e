/* cli/main.c: the gpuprof command dispatcher. Each subcommand lives in its
 * own cli/cmd_*.c and is listed in the registry below. */
#include "cli/cli.h"
#include <errno.h>
#include <gpuprof/common.h>
#include <stdio.h>
#include <string.h>

static const gp_command commands[] = {
    {"summary", "per-operation statistics and bottlenecks of a trace", gp_cmd_summary},
    {"analyze", "HTA-style GPU breakdowns: temporal, kernels, idle, launches, queues",
     gp_cmd_analyze},
    {"merge", "combines the parts of `analyze --shard I/N` into one analyze report", gp_cmd_merge},
    {"compare", "compare baseline and current runs; CI gate for regressions", gp_cmd_compare},
    {"advise", "optimization advice from a trace (rule engine)", gp_cmd_advise},
    {"history", "one operation's figures over the runs of a store, with steps", gp_cmd_history},
    {"flame", "flame graph (HTML, folded, speedscope) of a trace or folded stacks", gp_cmd_flame},
    {"timeline", "CPU/GPU timeline: Chrome JSON, Perfetto .pftrace or an HTML viewer",
     gp_cmd_timeline},
    {"memory", "memory over time, peak, growth, leaks, fragmentation", gp_cmd_memory},
    {"report", "self-contained HTML dashboard of one or more traces", gp_cmd_report},
    {"compile", "torch.compile analysis: TORCH_TRACE logs and compiled-model traces",
     gp_cmd_compile},
    {"run", "record a CUDA/OpenCL program into an SQLite store, then summarize", gp_cmd_run},
    {"runs", "list the runs of a store", gp_cmd_runs},
    {"sql", "ad-hoc SQL query on a store", gp_cmd_sql},
    {"export", "export a run or trace: lossless Chrome/Kineto JSON or Perfetto .pftrace",
     gp_cmd_export},
    {"devices", "list GPUs (NVML, nvidia-smi, sysfs), OpenCL devices and the host", gp_cmd_devices},
    {"monitor", "live device view (full screen on a terminal, JSON/CSV lines when piped)",
     gp_cmd_monitor},
    {"health", "device backend health: ok / degraded / unavailable, with the reason",
     gp_cmd_health},
    {"session", "monitoring sessions: start, stop, snapshot, list, show", gp_cmd_session},
    {"audit", "list and verify the audit log of a store or audit file", gp_cmd_audit},
    {"bench", "built-in device benchmarks (bandwidth, throughput, latency), stored", gp_cmd_bench},
    {"serve", "dashboard and HTTP API over traces, runs and devices", gp_cmd_serve},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: gpuprof COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].fn) fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
    fprintf(f, "\n'gpuprof COMMAND --help' for a command's options; 'gpuprof --version'.\n");
}

/* Every command's output that went to stdout is checked here, once: a
 * failed write or close (disk full, a closed pipe's EIO, /dev/full) turns the
 * exit status into 1 with a one-line message, so nothing is lost silently. */
static int close_stdout(int rc)
{
    errno = 0;
    int bad = ferror(stdout);
    if (fflush(stdout) != 0) bad = 1;
    int saved = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (!bad) return rc;
    if (saved)
        fprintf(stderr, "gpuprof: error writing standard output: %s\n", strerror(saved));
    else
        fprintf(stderr, "gpuprof: error writing standard output\n");
    return rc ? rc : 1;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("gpuprof %s\n", gp_version());
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (commands[i].fn && !strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "gpuprof: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    return close_stdout(dispatch(argc, argv));
}
