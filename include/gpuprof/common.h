/* gpuprof/common.h: export macro, error codes and version shared by every
 * public gpuprof header. */
#ifndef GPUPROF_COMMON_H
#define GPUPROF_COMMON_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GP_BUILDING_LIB)
#define GP_API __attribute__((visibility("default")))
#else
#define GP_API
#endif

/* Error codes: functions return 0 on success or one of these (negative). */
enum {
    GP_OK = 0,
    GP_EINVAL = -1,       /* invalid argument */
    GP_ENOMEM = -2,       /* out of memory */
    GP_EIO = -3,          /* read/write failure */
    GP_EPARSE = -4,       /* malformed input */
    GP_ENOTFOUND = -5,    /* file, device or name not found */
    GP_EUNSUPPORTED = -6, /* not supported by this build, device or driver */
    GP_ERANGE = -7,       /* value out of range */
    GP_ESTATE = -8,       /* call not valid in the current state */
    GP_ENODEV = -9,       /* no device / no backend */
};

/* Returns a static English description of a GP_E* code (never NULL). */
GP_API const char *gp_strerror(int code);

/* Returns the library version string, e.g. "0.1.0" (static). */
GP_API const char *gp_version(void);

#ifdef __cplusplus
}
#endif
#endif
