/* bench/smi_standin.c: a stand-in nvidia-smi in C for bench/monitor_smi.sh:
 * starts in well under a millisecond (no driver to open), so the benchmark
 * measures gpuprof's fallback backend, not nvidia-smi. It answers what the
 * fallback asks: --help-query-gpu, --help-query-compute-apps, one
 * --query-gpu=... or --query-compute-apps=... (CSV, noheader, nounits), once
 * or every N ms with -lms N (flushing each iteration, as nvidia-smi does).
 * SMI_STANDIN_GPUS sets the GPU count (default 8), each with one process. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char *const fields[] = {"timestamp",
                                     "index",
                                     "name",
                                     "uuid",
                                     "pci.bus_id",
                                     "driver_version",
                                     "utilization.gpu",
                                     "utilization.memory",
                                     "memory.total",
                                     "memory.used",
                                     "memory.free",
                                     "temperature.gpu",
                                     "power.draw",
                                     "enforced.power.limit",
                                     "clocks.sm",
                                     "clocks.mem",
                                     "fan.speed",
                                     "pstate",
                                     "clocks_event_reasons.active",
                                     "ecc.errors.corrected.volatile.total",
                                     "ecc.errors.uncorrected.volatile.total",
                                     "mig.mode.current"};

static void stamp(char *out, size_t n)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    localtime_r(&tv.tv_sec, &tm);
    size_t k = strftime(out, n, "%Y/%m/%d %H:%M:%S", &tm);
    snprintf(out + k, n - k, ".%03d", (int)(tv.tv_usec / 1000));
}

static void value(const char *f, int g, const char *ts, char *out, size_t n)
{
    if (!strcmp(f, "timestamp"))
        snprintf(out, n, "%s", ts);
    else if (!strcmp(f, "index"))
        snprintf(out, n, "%d", g);
    else if (!strcmp(f, "name"))
        snprintf(out, n, "NVIDIA H100 80GB HBM3");
    else if (!strcmp(f, "uuid") || !strcmp(f, "gpu_uuid"))
        snprintf(out, n, "GPU-%08x-0000-1111-2222-333333333333", 0x1000 + g);
    else if (!strcmp(f, "pci.bus_id"))
        snprintf(out, n, "00000000:%02X:00.0", 0x18 + g);
    else if (!strcmp(f, "driver_version"))
        snprintf(out, n, "550.90.07");
    else if (!strcmp(f, "memory.total"))
        snprintf(out, n, "81559");
    else if (!strcmp(f, "memory.used") || !strcmp(f, "used_memory"))
        snprintf(out, n, "%d", 1000 + g);
    else if (!strcmp(f, "memory.free"))
        snprintf(out, n, "%d", 80559 - g);
    else if (!strcmp(f, "pstate"))
        snprintf(out, n, "P0");
    else if (!strcmp(f, "clocks_event_reasons.active"))
        snprintf(out, n, "0x0000000000000000");
    else if (!strcmp(f, "mig.mode.current"))
        snprintf(out, n, "Disabled");
    else if (!strcmp(f, "fan.speed"))
        snprintf(out, n, "[N/A]");
    else if (!strcmp(f, "pid"))
        snprintf(out, n, "%d", 100000 + g);
    else
        snprintf(out, n, "%d", 40 + g);
}

/* One iteration: a line per GPU (query gpu) or per process (compute apps). */
static void iteration(const char *list, int gpus)
{
    char ts[64], copy[1024], v[128], line[4096];
    stamp(ts, sizeof ts);
    for (int g = 0; g < gpus; g++) {
        snprintf(copy, sizeof copy, "%s", list);
        size_t k = 0;
        line[0] = 0;
        for (char *save = NULL, *f = strtok_r(copy, ",", &save); f;
             f = strtok_r(NULL, ",", &save)) {
            value(f, g, ts, v, sizeof v);
            k += (size_t)snprintf(line + k, sizeof line - k, "%s%s", k ? ", " : "", v);
        }
        puts(line);
    }
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int gpus = getenv("SMI_STANDIN_GPUS") ? atoi(getenv("SMI_STANDIN_GPUS")) : 8;
    if (argc > 1 && !strcmp(argv[1], "--help-query-gpu")) {
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) printf("\"%s\"\n", fields[i]);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--help-query-compute-apps")) {
        puts("\"timestamp\"\n\"gpu_uuid\"\n\"pid\"\n\"used_memory\"");
        return 0;
    }
    const char *q = argc > 1 ? argv[1] : "";
    const char *list = !strncmp(q, "--query-gpu=", 12)            ? q + 12
                       : !strncmp(q, "--query-compute-apps=", 21) ? q + 21
                                                                  : NULL;
    if (!list) {
        fprintf(stderr, "smi_standin: unsupported arguments\n");
        return 2;
    }
    long lms = 0;
    for (int i = 2; i + 1 < argc; i++)
        if (!strcmp(argv[i], "-lms")) lms = atol(argv[i + 1]);
    for (;;) {
        iteration(list, gpus);
        if (lms <= 0) return 0;
        struct timespec ts = {lms / 1000, (lms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}
