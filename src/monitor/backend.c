/* monitor/backend.c: small helpers shared by the device backends (file
 * reading under a configurable root, process names). */
#include "monitor/backend.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void gp_backend_strcpy(char *dst, size_t n, const char *src)
{
    if (!n) return;
    size_t k = src ? strlen(src) : 0;
    if (k >= n) k = n - 1;
    if (k) memcpy(dst, src, k);
    dst[k] = 0;
}

int gp_backend_read_file(const char *root, const char *path, char *buf, size_t n)
{
    char full[1024];
    if (!root || !root[0] || !strcmp(root, "/"))
        snprintf(full, sizeof full, "%s", path);
    else
        snprintf(full, sizeof full, "%s%s", root, path);
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t k = 0, r = 0;
    while ((size_t)k < n - 1 && (r = read(fd, buf + k, n - 1 - (size_t)k)) > 0) k += r;
    close(fd);
    if (k == 0 && r < 0) return -1;
    while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == ' ')) k--;
    buf[k] = 0;
    return (int)k;
}

int gp_backend_proc_name(const char *root, int pid, char *name, size_t n)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    if (gp_backend_read_file(root, path, name, n) > 0) return 1;
    gp_backend_strcpy(name, n, "?");
    return 0;
}
