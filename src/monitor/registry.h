/* monitor/registry.h: the static list of device backends compiled in. */
#ifndef GP_MONITOR_REGISTRY_H
#define GP_MONITOR_REGISTRY_H
#include "monitor/backend.h"
#include <stddef.h>

/* Returns the backends in probing order (NVML before its nvidia-smi
 * fallback); *n receives the count. The array is static. */
const gp_backend *const *gp_registry_backends(size_t *n);

#endif
