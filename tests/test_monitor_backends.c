/* tests/test_monitor_backends.c: the sysfs backend on a fake /sys + /proc
 * tree (an AMD and an Intel GPU, DRM fdinfo clients), the host backend on a
 * fake /proc, and the OpenCL backend on PoCL. */
#include "monitor/backend.h"
#include "test.h"
#include <gpuprof/monitor.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *rel, const char *text)
{
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s%s", root, rel);
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(dir, 0777);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    if (!f) abort();
    fputs(text, f);
    fclose(f);
}

static void link_to(const char *rel, const char *target)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", root, rel);
    unlink(path);
    if (symlink(target, path)) abort();
}

static void make_tree(void)
{
    snprintf(root, sizeof root, "/tmp/gpuprof-sysfs-XXXXXX");
    if (!mkdtemp(root)) abort();
    /* AMD card0 */
    const char *a = "/sys/class/drm/card0/device";
    char p[256];
#define A(file, text) (snprintf(p, sizeof p, "%s/%s", a, file), put(p, text))
    A("vendor", "0x1002\n");
    A("device", "0x740f\n");
    A("product_name", "AMD Instinct MI210\n");
    A("unique_id", "ab12cd34ef56\n");
    A("uevent", "DRIVER=amdgpu\nPCI_CLASS=38000\nPCI_SLOT_NAME=0000:03:00.0\n");
    A("gpu_busy_percent", "73\n");
    A("mem_busy_percent", "12\n");
    A("mem_info_vram_total", "68702699520\n");
    A("mem_info_vram_used", "17179869184\n");
    A("pp_dpm_sclk", "0: 500Mhz\n1: 1700Mhz *\n");
    A("pp_dpm_mclk", "0: 1600Mhz *\n");
    A("hwmon/hwmon3/temp1_input", "54000\n");
    A("hwmon/hwmon3/temp1_crit", "100000\n");
    A("hwmon/hwmon3/power1_average", "243000000\n");
    A("hwmon/hwmon3/power1_cap", "300000000\n");
    A("hwmon/hwmon3/pwm1", "128\n");
    A("hwmon/hwmon3/pwm1_max", "255\n");
#undef A
    put("/sys/class/drm/card0-DP-1/status", "disconnected\n"); /* a connector: ignored */
    /* Intel card1 (xe-like, no busy file: busy % comes from fdinfo) */
    const char *b = "/sys/class/drm/card1/device";
#define B(file, text) (snprintf(p, sizeof p, "%s/%s", b, file), put(p, text))
    B("vendor", "0x8086\n");
    B("device", "0x56a0\n");
    B("uevent", "DRIVER=xe\nPCI_SLOT_NAME=0000:04:00.0\n");
    B("hwmon/hwmon5/energy1_input", "1000000\n");
    B("hwmon/hwmon5/temp1_input", "41000\n");
    B("tile0/gt0/freq0/cur_freq", "2050\n");
#undef B
    /* a virtual GPU of another vendor: ignored */
    put("/sys/class/drm/card2/device/vendor", "0x1af4\n");
    /* process 4242 uses both GPUs; 4243 the Intel one through two fds of one client */
    put("/proc/4242/comm", "python3\n");
    put("/proc/4243/comm", "llama-server\n");
    put("/proc/4242/fdinfo/5", "pos:\t0\ndrm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\n"
                               "drm-client-id:\t7\ndrm-engine-gfx:\t1000000000 ns\n"
                               "drm-engine-compute:\t0 ns\ndrm-memory-vram:\t1048576 KiB\n");
    put("/proc/4242/fdinfo/6", "drm-driver:\txe\ndrm-pdev:\t0000:04:00.0\ndrm-client-id:\t3\n"
                               "drm-engine-rcs:\t0 ns\ndrm-total-vram0:\t2048 KiB\n");
    put("/proc/4243/fdinfo/3", "drm-driver:\txe\ndrm-pdev:\t0000:04:00.0\ndrm-client-id:\t9\n"
                               "drm-engine-capacity-ccs:\t4\n"
                               "drm-engine-rcs:\t0 ns\ndrm-engine-ccs:\t0 ns\n"
                               "drm-total-vram0:\t4096 KiB\n");
    put("/proc/4243/fdinfo/4", "drm-driver:\txe\ndrm-pdev:\t0000:04:00.0\ndrm-client-id:\t9\n"
                               "drm-engine-rcs:\t0 ns\ndrm-total-vram0:\t4096 KiB\n");
    put("/proc/4242/fdinfo/1", "pos:\t0\nflags:\t02\n"); /* not a DRM fd */
    put("/proc/4242/fd/.keep", "");
    put("/proc/4243/fd/.keep", "");
    link_to("/proc/4242/fd/5", "/dev/dri/renderD128");
    link_to("/proc/4242/fd/6", "/dev/dri/renderD129");
    link_to("/proc/4242/fd/1", "/dev/pts/0");
    link_to("/proc/4243/fd/3", "/dev/dri/renderD129");
    link_to("/proc/4243/fd/4", "/dev/dri/renderD129");
    /* host files */
    put("/proc/stat", "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 50 0 50 400 0 0 0 0 0 0\n");
    put("/proc/meminfo", "MemTotal:       16384000 kB\nMemFree:         1000000 kB\n"
                         "MemAvailable:    4096000 kB\n");
    put("/proc/loadavg", "1.50 0.75 0.25 2/345 6789\n");
    put("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Fake CPU @ "
                         "3.00GHz\n\nprocessor\t: 1\nvendor_id\t: GenuineIntel\nmodel name\t: "
                         "Fake CPU @ 3.00GHz\n");
}

static void remove_tree(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd)) fprintf(stderr, "could not remove %s\n", root);
}

static gp_mon_config tree_cfg(void)
{
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    snprintf(c.sysfs_root, sizeof c.sysfs_root, "%s", root);
    return c;
}

TEST(sysfs_amd_intel)
{
    make_tree();
    gp_mon_config c = tree_cfg();
    gp_backend_env env = {&c, 1000000000LL};
    gp_health_entry h = {0};
    void *st = NULL;
    ASSERT_EQ_INT(gp_backend_sysfs.init(&st, &env, &h), 0);
    ASSERT_EQ_INT(h.state, GP_HEALTH_OK);
    gp_dev_info d[4];
    gp_err err = {0};
    ASSERT_EQ_INT(gp_backend_sysfs.discover(st, d, 4, &err), 2);
    ASSERT_EQ_STR(d[0].name, "AMD Instinct MI210");
    ASSERT_EQ_STR(d[0].vendor, "AMD");
    ASSERT_EQ_STR(d[0].uuid, "ab12cd34ef56");
    ASSERT_EQ_STR(d[0].pci_bus_id, "0000:03:00.0");
    ASSERT_EQ_STR(d[1].vendor, "Intel");
    ASSERT_EQ_STR(d[1].name, "Intel GPU 0x56a0");
    int64_t t0 = 1000000000LL;
    gp_dev_sample s;
    gp_dev_proc pr[8];
    int np = 8;
    gp_backend_sysfs.begin_tick(st, t0);
    memset(&s, 0, sizeof s);
    ASSERT_EQ_INT(gp_backend_sysfs.sample(st, 0, t0, &s, pr, &np, &err), 0);
    ASSERT_NEAR(s.v[GP_MF_UTIL], 73, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_UTIL], 12, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_TOTAL], 68702699520.0, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_USED], 17179869184.0, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_FREE], 68702699520.0 - 17179869184.0, 0);
    ASSERT_NEAR(s.v[GP_MF_CLOCK_SM], 1700, 0);
    ASSERT_NEAR(s.v[GP_MF_CLOCK_MEM], 1600, 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP], 54, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_TEMP_SHUTDOWN], 100, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_POWER], 243, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_POWER_LIMIT], 300, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_FAN], 100.0 * 128 / 255, 1e-9);
    ASSERT(!gp_sample_has(&s, GP_MF_ECC_CORR));
    ASSERT_EQ_INT(np, 1);
    ASSERT_EQ_INT(pr[0].pid, 4242);
    ASSERT_EQ_STR(pr[0].name, "python3");
    ASSERT_EQ_INT(pr[0].mem_bytes, 1073741824LL);
    ASSERT(!(pr[0].valid & GP_PROC_UTIL)); /* a rate needs two ticks */
    /* one second later: the clients used engine time; energy went up 150 J */
    put("/proc/4242/fdinfo/5",
        "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\n"
        "drm-client-id:\t7\ndrm-engine-gfx:\t1250000000 ns\n"
        "drm-engine-compute:\t100000000 ns\ndrm-memory-vram:\t1048576 KiB\n");
    put("/proc/4242/fdinfo/6", "drm-driver:\txe\ndrm-pdev:\t0000:04:00.0\ndrm-client-id:\t3\n"
                               "drm-engine-rcs:\t300000000 ns\ndrm-total-vram0:\t2048 KiB\n");
    put("/proc/4243/fdinfo/3", "drm-driver:\txe\ndrm-pdev:\t0000:04:00.0\ndrm-client-id:\t9\n"
                               "drm-engine-capacity-ccs:\t4\n"
                               "drm-engine-rcs:\t100000000 ns\ndrm-engine-ccs:\t2000000000 ns\n"
                               "drm-total-vram0:\t4096 KiB\n");
    put("/proc/4243/fdinfo/4", "drm-driver:\txe\ndrm-pdev:\t0000:04:00.0\ndrm-client-id:\t9\n"
                               "drm-engine-capacity-ccs:\t4\n"
                               "drm-engine-rcs:\t100000000 ns\ndrm-engine-ccs:\t2000000000 ns\n"
                               "drm-total-vram0:\t4096 KiB\n");
    memset(&s, 0, sizeof s);
    np = 8;
    ASSERT_EQ_INT(gp_backend_sysfs.sample(st, 1, t0, &s, pr, &np, &err), 0); /* energy base */
    put("/sys/class/drm/card1/device/hwmon/hwmon5/energy1_input", "151000000\n");
    int64_t t1 = t0 + 1000000000LL;
    gp_backend_sysfs.begin_tick(st, t1);
    memset(&s, 0, sizeof s);
    np = 8;
    ASSERT_EQ_INT(gp_backend_sysfs.sample(st, 0, t1, &s, pr, &np, &err), 0);
    ASSERT_EQ_INT(np, 1);
    ASSERT(pr[0].valid & GP_PROC_UTIL);
    ASSERT_NEAR(pr[0].util_pct, 25, 1e-9); /* gfx: 250 ms in 1 s, the busiest engine */
    memset(&s, 0, sizeof s);
    np = 8;
    ASSERT_EQ_INT(gp_backend_sysfs.sample(st, 1, t1, &s, pr, &np, &err), 0);
    /* Intel: busy % = sum over clients of their busiest engine (ccs / capacity 4) */
    ASSERT_NEAR(s.v[GP_MF_UTIL], 30 + 50, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_POWER], 150, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_ENERGY], 151, 1e-9);
    ASSERT_NEAR(s.v[GP_MF_CLOCK_SM], 2050, 0);
    ASSERT_NEAR(s.v[GP_MF_TEMP], 41, 1e-9);
    ASSERT(!gp_sample_has(&s, GP_MF_MEM_TOTAL)); /* no VRAM file: N/A */
    ASSERT_EQ_INT(np, 2);
    int saw4243 = 0;
    for (int i = 0; i < np; i++)
        if (pr[i].pid == 4243) {
            saw4243 = 1;
            ASSERT_EQ_INT(pr[i].mem_bytes, 4096 * 1024); /* one client, counted once */
            ASSERT_NEAR(pr[i].util_pct, 50, 1e-9);
            ASSERT_EQ_STR(pr[i].name, "llama-server");
        }
    ASSERT(saw4243);
    gp_backend_sysfs.fini(st);
    /* and through the monitor */
    c.enable_opencl_monitoring = 0;
    snprintf(c.nvml_library, sizeof c.nvml_library, "/nonexistent/libnvidia-ml.so.1");
    snprintf(c.nvidia_smi, sizeof c.nvidia_smi, "/nonexistent/nvidia-smi");
    gp_monitor *m = gp_monitor_create(&c);
    ASSERT_EQ_INT(gp_monitor_device_count(m), 3); /* AMD, Intel, host */
    gp_health_entry he[8];
    size_t n = 0;
    ASSERT_EQ_INT(gp_monitor_health(m, he, 8, &n), GP_HEALTH_OK);
    gp_monitor_destroy(m);
    remove_tree();
}

TEST(host_fake_proc)
{
    make_tree();
    gp_mon_config c = tree_cfg();
    gp_backend_env env = {&c, 1000000000LL};
    gp_health_entry h = {0};
    void *st = NULL;
    ASSERT_EQ_INT(gp_backend_host.init(&st, &env, &h), 0);
    gp_dev_info d;
    gp_err err = {0};
    ASSERT_EQ_INT(gp_backend_host.discover(st, &d, 1, &err), 1);
    ASSERT_EQ_STR(d.name, "Fake CPU @ 3.00GHz");
    ASSERT_EQ_STR(d.vendor, "GenuineIntel");
    ASSERT_EQ_INT(d.compute_units, 2);
    gp_dev_sample s;
    memset(&s, 0, sizeof s);
    ASSERT_EQ_INT(gp_backend_host.sample(st, 0, 0, &s, NULL, NULL, &err), 0);
    ASSERT(!gp_sample_has(&s, GP_MF_UTIL)); /* first sample: no rate yet */
    ASSERT_NEAR(s.v[GP_MF_MEM_TOTAL], 16384000.0 * 1024, 0);
    ASSERT_NEAR(s.v[GP_MF_MEM_USED], (16384000.0 - 4096000.0) * 1024, 0);
    ASSERT_NEAR(s.v[GP_MF_LOAD1], 1.5, 1e-12);
    ASSERT_NEAR(s.v[GP_MF_LOAD15], 0.25, 1e-12);
    put("/proc/stat", "cpu  250 0 150 900 0 0 0 0 0 0\n"); /* +200 busy, +100 idle */
    memset(&s, 0, sizeof s);
    ASSERT_EQ_INT(gp_backend_host.sample(st, 0, 0, &s, NULL, NULL, &err), 0);
    ASSERT_NEAR(s.v[GP_MF_UTIL], 200.0 / 300.0 * 100, 1e-9);
    gp_backend_host.fini(st);
    remove_tree();
}

TEST(opencl_pocl)
{
#ifndef GP_HAVE_OPENCL
    SKIP("built without OpenCL");
#else
    gp_mon_config c;
    gp_mon_config_defaults(&c);
    c.enable_gpu_monitoring = 0;
    c.enable_host_monitoring = 0;
    gp_monitor *m = gp_monitor_create(&c);
    size_t n = gp_monitor_device_count(m);
    if (!n) {
        gp_monitor_destroy(m);
        SKIP("no OpenCL platform installed (pocl-opencl-icd)");
    }
    gp_dev_info d;
    ASSERT_EQ_INT(gp_monitor_device_info(m, 0, &d), 0);
    ASSERT_EQ_STR(d.backend, "opencl");
    ASSERT(d.name[0]);
    ASSERT(d.platform[0]);
    ASSERT_CMP_INT(d.compute_units, >=, 1);
    ASSERT_CMP_INT(d.max_clock_mhz, >=, 0);
    gp_monitor_sample_now(m);
    gp_dev_sample s;
    ASSERT_EQ_INT(gp_monitor_get_status(m, 0, &s), 0);
    ASSERT(gp_sample_has(&s, GP_MF_MEM_TOTAL));
    ASSERT_CMP_INT((long long)s.v[GP_MF_MEM_TOTAL], >, 0);
    ASSERT(!gp_sample_has(&s, GP_MF_UTIL)); /* OpenCL has no live counters */
    gp_health_entry h[4];
    size_t nh = 0;
    /* an OpenCL CPU device is not a GPU */
    ASSERT_EQ_INT(gp_monitor_health(m, h, 4, &nh), GP_HEALTH_UNAVAILABLE);
    ASSERT_EQ_INT(nh, 1);
    ASSERT_EQ_STR(h[0].backend, "opencl");
    ASSERT_EQ_INT(h[0].state, GP_HEALTH_OK);
    gp_monitor_destroy(m);
#endif
}

TEST_MAIN(sysfs_amd_intel, host_fake_proc, opencl_pocl)
