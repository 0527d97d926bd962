/* Paths walked as a careful Unix tool walks them in a folder other users
 * can write: a link, in any component, is followed only where it is this
 * user's or root's (what fs.protected_symlinks grants in sticky folders,
 * here everywhere), each step relative to the folder already opened, so no
 * rename between a check and its use moves the walk elsewhere.  Lua-free:
 * -errno, with a sentence in why. */
#ifndef PMCSH_SAFEPATH_H
#define PMCSH_SAFEPATH_H
#include <stddef.h>

/* The folder `dir` (O_PATH), made with the folders above it where missing
 * when make (the mode they are made with, under the umask; 0: none made);
 * -ELOOP for another user's link, -ENOTDIR, -errno. */
int safe_dir(const char *dir, int make, char *why, size_t len);

/* The folder of path, opened (safe_dir), and the last component's offset
 * in path; -errno. */
int safe_parent(const char *path, int make, const char **last, char *why, size_t len);

/* openat(flags | O_NOFOLLOW) of path's last component in its folder; a
 * link there is followed (once more through safe_parent) only with follow
 * and only where it is this user's or root's.  The fd, or -errno. */
int safe_open(const char *path, int flags, int mode, int follow, char *why, size_t len);

/* A new file beside path (".BASE.XXXXXX", mode 0666 less the umask, made
 * O_EXCL in path's folder): its fd; *dirfd the folder (the caller's, for
 * safe_commit or safe_discard), name the temporary's name; -errno. */
int safe_temp(const char *path, int *dirfd, char *name, size_t namelen, char *why, size_t len);
/* renameat(dirfd, name, dirfd, base of path) and closes dirfd; -errno. */
int safe_commit(int dirfd, const char *name, const char *path);
/* unlinkat(dirfd, name) and closes dirfd. */
void safe_discard(int dirfd, const char *name);

/* Removes path when it is still the file open as fd (same device and
 * inode), found through safe_parent: never a file a renamed folder or a
 * planted link puts at that name.  0, or -errno. */
int safe_unlink_same(const char *path, int fd);

/* Whether every folder from / to dir (its real path) is this user's or
 * root's and written by nobody else (or sticky): a place to keep what
 * pmcsh will run later.  0, or -errno with why. */
int safe_private(const char *dir, char *why, size_t len);

#endif
