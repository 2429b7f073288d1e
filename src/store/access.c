/* store/access.c: file modes and ownership checks (see access.h). */
#include "store/access.h"
#include <errno.h>
#include <fcntl.h>
#include <gpuprof/monitor.h>
#include <sys/stat.h>
#include <unistd.h>

mode_t gp_access_mode(int dir)
{
    gp_mon_config c;
    char err[256];
    int group = gp_mon_config_auto(&c, err, sizeof err) == 0 && c.share_group;
    if (dir) return group ? 0750 : 0700;
    return group ? 0640 : 0600;
}

int gp_access_create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, gp_access_mode(0));
    if (fd < 0) return errno == EEXIST ? 0 : -errno;
    /* the umask may have removed bits, never added: set exactly */
    fchmod(fd, gp_access_mode(0));
    close(fd);
    return 0;
}

int gp_access_mkdir(const char *path)
{
    if (mkdir(path, gp_access_mode(1)) == 0) return 0;
    return errno == EEXIST ? 0 : -errno;
}

int gp_access_foreign(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && st.st_uid != geteuid();
}
