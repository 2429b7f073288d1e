/* tests/monitor_helpers.h: monitors in the monitor tests. */
#ifndef GP_TEST_MONITOR_HELPERS_H
#define GP_TEST_MONITOR_HELPERS_H
#include <gpuprof/monitor.h>
#include <stdio.h>

/* The defaults, but only the GPU backends under test: NVML from nvml_lib,
 * nvidia-smi from smi (paths; a missing one is an unavailable backend), no
 * sysfs, OpenCL or host devices, no event log or reports, no periodic
 * rediscovery. */
static inline gp_mon_config gp_test_mon_config(const char *nvml_lib, const char *smi)
{
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    snprintf(c.nvml_library, sizeof c.nvml_library, "%s", nvml_lib);
    snprintf(c.nvidia_smi, sizeof c.nvidia_smi, "%s", smi);
    snprintf(c.sysfs_root, sizeof c.sysfs_root, "/nonexistent-sysfs");
    c.enable_opencl_monitoring = 0;
    c.enable_host_monitoring = 0;
    c.enable_event_log = 0;
    c.export_json_reports = 0;
    c.device_discovery_interval_seconds = 0;
    return c;
}

#endif
