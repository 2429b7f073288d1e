/* cli/mon_common.h: option handling shared by the device-monitor commands
 * (devices, monitor, health, session): configuration layering. */
#ifndef GP_CLI_MON_COMMON_H
#define GP_CLI_MON_COMMON_H
#include "core/sbuf.h"
#include <gpuprof/monitor.h>
#include <stdio.h>

/* Collected --config / --set options. */
typedef struct gp_mon_opts {
    const char *config; /* --config FILE, else $GPUPROF_CONFIG */
    const char *sets[32];
    int nsets;
} gp_mon_opts;

/* Records a --set KEY=VALUE; prints an error and returns 2 when full. */
int gp_cli_mon_add_set(gp_mon_opts *o, const char *kv);
/* Builds the configuration: defaults, the YAML file, GPUPROF_* environment
 * variables, then --set options. Prints the error and returns 2 on bad
 * input, else 0. */
int gp_cli_mon_config(const gp_mon_opts *o, gp_mon_config *c);

#endif
