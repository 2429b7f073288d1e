/* store/access.h: who may read gpuprof's files (issue 16, docs/security.md).
 * Stores, session reports and audit files are created owner-only (0600,
 * folders 0700) unless the configuration key `share_group` widens them to
 * the group (0640 / 0750). A store owned by another user is opened
 * read-only. */
#ifndef GP_STORE_ACCESS_H
#define GP_STORE_ACCESS_H
#include <sys/types.h>

/* The mode new files (dir = 0) or folders (dir = 1) get. */
mode_t gp_access_mode(int dir);

/* Creates path as an empty file with gp_access_mode(0) when it does not
 * exist (so that SQLite's -wal and -shm files, which copy the database's
 * mode, are owner-only too). 0, or -errno. */
int gp_access_create(const char *path);

/* mkdir with gp_access_mode(1); an existing folder is fine. 0 or -errno. */
int gp_access_mkdir(const char *path);

/* 1 when path exists and belongs to another user than the effective one
 * (such a store is opened read-only). */
int gp_access_foreign(const char *path);

#endif
