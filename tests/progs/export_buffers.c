/* tests/progs/export_buffers.c: writes a gp_export_json file with buffers
 * tracked by libgpuprof's memory tracker, for test_compare_buffers.
 * usage: export_buffers OUT [--peak BYTES] NAME:BYTES...  (a temporary
 * buffer of BYTES raises the peak first, then is untracked). */
#include <gpuprof/gpuprof.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    static char mem[64];
    if (argc < 2) {
        fprintf(stderr, "usage: export_buffers OUT [--peak BYTES] NAME:BYTES...\n");
        return 2;
    }
    gp_options o;
    memset(&o, 0, sizeof o);
    o.leak_report = 1;
    gp_profiler *p = gp_profiler_create(&o);
    if (!p) return 1;
    for (int i = 0; i < 20; i++) {
        gp_range_begin(p, "step");
        gp_range_end(p);
    }
    int64_t shape[1] = {16};
    int k = 0;
    for (int i = 2; i < argc && k < 63; i++) {
        if (!strcmp(argv[i], "--peak") && i + 1 < argc) {
            gp_mem_track(p, "temporary", &mem[63], strtoull(argv[++i], NULL, 10), NULL, 0, NULL);
            gp_mem_untrack(p, &mem[63]);
            continue;
        }
        char *colon = strrchr(argv[i], ':');
        if (!colon) return 2;
        *colon = 0;
        if (gp_mem_track(p, argv[i], &mem[k++], strtoull(colon + 1, NULL, 10), shape, 1, "float32"))
            return 1;
    }
    int rc = gp_export_json(p, argv[1]);
    gp_profiler_destroy(p);
    return rc ? 1 : 0;
}
