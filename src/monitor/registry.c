/* monitor/registry.c: the explicit, static registry of device backends. The
 * OpenCL one is listed only when CMake found OpenCL (GP_HAVE_OPENCL). */
#include "monitor/registry.h"

static const gp_backend *const backends[] = {
    &gp_backend_nvml, &gp_backend_nvsmi, &gp_backend_sysfs,
#ifdef GP_HAVE_OPENCL
    &gp_backend_ocl,
#endif
    &gp_backend_host,
};

const gp_backend *const *gp_registry_backends(size_t *n)
{
    *n = sizeof backends / sizeof backends[0];
    return backends;
}
