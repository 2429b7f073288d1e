/* core/demangle.h: C++ symbol demangling (CUDA kernel names from CUPTI are
 * mangled) through the C++ runtime's __cxa_demangle, found at run time. */
#ifndef GP_CORE_DEMANGLE_H
#define GP_CORE_DEMANGLE_H

/* Returns the demangled form of an Itanium-ABI mangled name ("_Z...") as a
 * malloc'd string the caller frees, or NULL when the name is not mangled,
 * cannot be demangled, or no C++ runtime can be loaded. */
char *gp_demangle(const char *mangled);

#endif
