/* tests/fuzz/fuzz_config.c: libFuzzer target for the monitor's YAML config
 * reader: any file must load or fail with "FILE:LINE: ..." (one line). */
#include <gpuprof/monitor.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/gpuprof-fuzz-cfg-%d.yaml", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    char err[512] = {0};
    int rc = gp_mon_config_load(&c, path, err, sizeof err);
    if (rc && (strncmp(err, path, strlen(path)) != 0 || strchr(err, '\n'))) abort();
    return 0;
}
