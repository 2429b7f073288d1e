/* monitor/opencl/ocl.c: the OpenCL backend: every device of every platform
 * with its platform, name, vendor, type, global memory, compute units and
 * clock (real on PoCL). Built only when OpenCL was found. */
#include "monitor/backend.h"
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ocl_state {
    cl_device_id dev[GP_MAX_DEVS];
    cl_ulong mem[GP_MAX_DEVS];
    int ndev;
} ocl_state;

static int ocl_init(void **state, const gp_backend_env *env, gp_health_entry *h)
{
    (void)env;
    *state = NULL;
    cl_uint np = 0;
    cl_int rc = clGetPlatformIDs(0, NULL, &np);
    if (rc != CL_SUCCESS || np == 0) {
        snprintf(h->reason, sizeof h->reason, "OpenCL: no platform (ICD loader error %d)", rc);
        h->state = GP_HEALTH_UNAVAILABLE;
        return GP_ENODEV;
    }
    ocl_state *st = calloc(1, sizeof *st);
    if (!st) return GP_ENOMEM;
    h->state = GP_HEALTH_OK;
    snprintf(h->reason, sizeof h->reason, "OpenCL: %u platform(s)", np);
    *state = st;
    return 0;
}

static const char *type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return "gpu";
    if (t & CL_DEVICE_TYPE_CPU) return "cpu";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    return "other";
}

static int ocl_discover(void *state, gp_dev_info *out, int max, gp_err *err)
{
    ocl_state *st = state;
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
        return gp_err_set(err, GP_ENODEV, "OpenCL: clGetPlatformIDs failed");
    if (np > 16) np = 16;
    int n = 0;
    for (cl_uint p = 0; p < np; p++) {
        char pname[128] = "";
        clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof pname - 1, pname, NULL);
        cl_device_id ids[GP_MAX_DEVS];
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, GP_MAX_DEVS, ids, &nd) != CL_SUCCESS)
            continue;
        if (nd > GP_MAX_DEVS) nd = GP_MAX_DEVS;
        for (cl_uint i = 0; i < nd && n < max && n < GP_MAX_DEVS; i++) {
            gp_dev_info *d = &out[n];
            memset(d, 0, sizeof *d);
            gp_backend_strcpy(d->backend, sizeof d->backend, "opencl");
            gp_backend_strcpy(d->platform, sizeof d->platform, pname);
            clGetDeviceInfo(ids[i], CL_DEVICE_NAME, sizeof d->name - 1, d->name, NULL);
            clGetDeviceInfo(ids[i], CL_DEVICE_VENDOR, sizeof d->vendor - 1, d->vendor, NULL);
            clGetDeviceInfo(ids[i], CL_DRIVER_VERSION, sizeof d->driver_version - 1,
                            d->driver_version, NULL);
            cl_device_type t = 0;
            clGetDeviceInfo(ids[i], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            gp_backend_strcpy(d->kind, sizeof d->kind, type_name(t));
            cl_uint cu = 0, clk = 0;
            if (clGetDeviceInfo(ids[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL) ==
                CL_SUCCESS)
                d->compute_units = (int)cu;
            if (clGetDeviceInfo(ids[i], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof clk, &clk, NULL) ==
                CL_SUCCESS)
                d->max_clock_mhz = (int)clk;
            cl_ulong mem = 0;
            if (clGetDeviceInfo(ids[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL) !=
                CL_SUCCESS)
                mem = 0;
            d->present = 1;
            st->dev[n] = ids[i];
            st->mem[n] = mem;
            n++;
        }
    }
    st->ndev = n;
    return n;
}

/* OpenCL has no live counters: a sample carries the static global memory
 * size only (utilization, temperature... stay N/A). */
static int ocl_sample(void *state, int idx, int64_t mono_ns, gp_dev_sample *s, gp_dev_proc *procs,
                      int *nproc, gp_err *err)
{
    ocl_state *st = state;
    (void)mono_ns, (void)procs;
    if (nproc) *nproc = 0;
    if (idx < 0 || idx >= st->ndev) return gp_err_set(err, GP_ENODEV, "OpenCL: no device %d", idx);
    if (st->mem[idx]) gp_sample_set(s, GP_MF_MEM_TOTAL, (double)st->mem[idx]);
    return 0;
}

static void ocl_fini(void *state)
{
    free(state);
}

const gp_backend gp_backend_ocl = {
    .name = "opencl",
    .fallback_for = NULL,
    .is_gpu = 0,
    .init = ocl_init,
    .discover = ocl_discover,
    .begin_tick = NULL,
    .sample = ocl_sample,
    .fini = ocl_fini,
};
