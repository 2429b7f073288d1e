/* cli/mon_common.c: configuration layering and JSON writers shared by the
 * device-monitor commands. */
#include "cli/mon_common.h"
#include "monitor/fields.h"
#include <stdlib.h>
#include <string.h>

int gp_cli_mon_add_set(gp_mon_opts *o, const char *kv)
{
    if (o->nsets == (int)(sizeof o->sets / sizeof o->sets[0])) {
        fprintf(stderr, "gpuprof: too many --set options\n");
        return 2;
    }
    o->sets[o->nsets++] = kv;
    return 0;
}

int gp_cli_mon_config(const gp_mon_opts *o, gp_mon_config *c)
{
    char err[600];
    gp_mon_config_defaults(c);
    const char *path = o->config ? o->config : getenv("GPUPROF_CONFIG");
    if (path && *path && gp_mon_config_load(c, path, err, sizeof err)) {
        fprintf(stderr, "gpuprof: %s\n", err);
        return 2;
    }
    if (gp_mon_config_env(c, err, sizeof err)) {
        fprintf(stderr, "gpuprof: %s\n", err);
        return 2;
    }
    for (int i = 0; i < o->nsets; i++) {
        char key[128];
        const char *eq = strchr(o->sets[i], '=');
        if (!eq || (size_t)(eq - o->sets[i]) >= sizeof key) {
            fprintf(stderr, "gpuprof: --set expects KEY=VALUE, got '%s'\n", o->sets[i]);
            return 2;
        }
        memcpy(key, o->sets[i], (size_t)(eq - o->sets[i]));
        key[eq - o->sets[i]] = 0;
        if (gp_mon_config_set(c, key, eq + 1, err, sizeof err)) {
            fprintf(stderr, "gpuprof: --set %s\n", err);
            return 2;
        }
    }
    if (gp_mon_config_check(c, err, sizeof err)) { /* over every layer together */
        fprintf(stderr, "gpuprof: configuration: %s\n", err);
        return 2;
    }
    return 0;
}
