/* Paths walked safely in folders other users can write (core/safepath.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>
#include "safepath.h"

#define MAX_LINKS 16

static int say(char *why, size_t len, int err, const char *fmt, const char *a)
{
	snprintf(why, len, fmt, a);
	return -err;
}

/* A failed open of path: the path and the system's reason. */
static int refused(char *why, size_t len, int err, const char *path)
{
	snprintf(why, len, "%s: %s", path, strerror(err));
	return -err;
}

/* Whether a folder is written by nobody but its owner, or is sticky (no
 * one renames another's names in it), and is this user's or root's. */
static int guarded(const struct stat *d)
{
	return (d->st_uid == geteuid() || d->st_uid == 0) &&
	       (!(d->st_mode & (S_IWGRP | S_IWOTH)) || (d->st_mode & S_ISVTX));
}

/* Whether name, in dirfd, is a link of this user's or root's in a folder
 * where nobody else can put one of those links in its place (a link of
 * root's renamed into a group's folder is no longer where root put it):
 * NULL, or why not, in words. */
static const char *untrusted_link(int dirfd, const char *name)
{
	struct stat ls, d;
	if (fstatat(dirfd, name, &ls, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISLNK(ls.st_mode))
		return "is not a link";
	if (ls.st_uid != geteuid() && ls.st_uid != 0)
		return "is a link of another user's";
	if (fstat(dirfd, &d) < 0 || !guarded(&d))
		return "is a link in a folder others can write";
	return NULL;
}

static int walk(int at, const char *path, int make, int depth, char *why, size_t len);

/* The folder a link `name` in dirfd names (trusted links only). */
static int through(int dirfd, const char *name, int depth, char *why, size_t len)
{
	char target[PATH_MAX];
	if (depth >= MAX_LINKS)
		return say(why, len, ELOOP, "%s: too many links", name);
	const char *untrusted = untrusted_link(dirfd, name);
	if (untrusted) {
		snprintf(why, len, "%s %s: pmcsh follows none", name, untrusted);
		return -ELOOP;
	}
	ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
	if (n < 0)
		return say(why, len, errno, "%s: cannot read the link", name);
	target[n] = 0;
	return walk(dirfd, target, 0, depth + 1, why, len);
}

/* Opens the folder `path` from folder `at` (absolute paths from /), one
 * component at a time, O_NOFOLLOW; returns an O_PATH fd, or -errno. */
static int walk(int at, const char *path, int make, int depth, char *why, size_t len)
{
	int fd = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : openat(at, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return say(why, len, errno, "%s: cannot open its folder", path);
	char comp[NAME_MAX + 1];
	for (const char *p = path; *p;) {
		while (*p == '/')
			p++;
		size_t k = strcspn(p, "/");
		if (k == 0)
			break;
		if (k > NAME_MAX) {
			close(fd);
			return say(why, len, ENAMETOOLONG, "%s: a name too long", path);
		}
		memcpy(comp, p, k);
		comp[k] = 0;
		p += k;
		if (strcmp(comp, ".") == 0)
			continue;
		int nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && make) {
			if (mkdirat(fd, comp, (mode_t)make) < 0 && errno != EEXIST) {
				int e = errno;
				close(fd);
				return say(why, len, e, "cannot make the folder %s", comp);
			}
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
			struct stat ls;
			if (fstatat(fd, comp, &ls, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(ls.st_mode))
				nfd = through(fd, comp, depth, why, len);
			else
				nfd = say(why, len, ENOTDIR, "%s is not a folder", comp);
			if (nfd < 0) {
				close(fd);
				return nfd;
			}
		} else if (nfd < 0) {
			int e = errno;
			close(fd);
			return say(why, len, e, "%s: no such folder", comp);
		}
		close(fd);
		fd = nfd;
	}
	return fd;
}

int safe_dir(const char *dir, int make, char *why, size_t len)
{
	return walk(AT_FDCWD, dir, make, 0, why, len);
}

int safe_parent(const char *path, int make, const char **last, char *why, size_t len)
{
	const char *slash = strrchr(path, '/');
	*last = slash ? slash + 1 : path;
	if (!**last)
		return say(why, len, EISDIR, "%s names a folder", path);
	if (!slash)
		return walk(AT_FDCWD, ".", 0, 0, why, len);
	if (slash == path)
		return walk(AT_FDCWD, "/", 0, 0, why, len);
	char dir[PATH_MAX];
	if ((size_t)(slash - path) >= sizeof dir)
		return say(why, len, ENAMETOOLONG, "%s: too long", path);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	return walk(AT_FDCWD, dir, make, 0, why, len);
}

int safe_open(const char *path, int flags, int mode, int follow, char *why, size_t len)
{
	const char *last;
	int dfd = safe_parent(path, 0, &last, why, len);
	if (dfd < 0)
		return dfd;
	char name[NAME_MAX + 1];
	snprintf(name, sizeof name, "%s", last);
	for (int depth = 0;; depth++) {
		int fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0 || errno != ELOOP || !follow) {
			int e = errno;
			close(dfd);
			if (fd < 0 && e == ELOOP)
				return say(why, len, ELOOP, "%s is a link: pmcsh makes no file through one", path);
			return fd >= 0 ? fd : refused(why, len, e, path);
		}
		const char *untrusted = depth >= MAX_LINKS ? "leads through too many links" : untrusted_link(dfd, name);
		if (untrusted) {
			close(dfd);
			snprintf(why, len, "%s %s: pmcsh follows none", path, untrusted);
			return -ELOOP;
		}
		struct statfs sf;
		if (fstatfs(dfd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC) {	/* /proc/self/fd/1: the kernel's own */
			fd = openat(dfd, name, flags | O_CLOEXEC, mode);
			int e = errno;
			close(dfd);
			return fd >= 0 ? fd : refused(why, len, e, path);
		}
		char target[PATH_MAX];
		ssize_t n = readlinkat(dfd, name, target, sizeof target - 1);
		if (n < 0) {
			close(dfd);
			return say(why, len, errno, "%s: cannot read the link", path);
		}
		target[n] = 0;
		char *slash = strrchr(target, '/');
		int ndfd;
		if (!slash) {
			ndfd = openat(dfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
			if (strlen(target) >= sizeof name) {
				close(dfd);
				if (ndfd >= 0)
					close(ndfd);
				return say(why, len, ENAMETOOLONG, "%s: a link's name too long", path);
			}
			memcpy(name, target, strlen(target) + 1);
		} else {
			if (strlen(slash + 1) >= sizeof name) {
				close(dfd);
				return say(why, len, ENAMETOOLONG, "%s: a link's name too long", path);
			}
			memcpy(name, slash + 1, strlen(slash + 1) + 1);
			if (slash == target)
				slash[1] = 0;
			else
				*slash = 0;
			ndfd = walk(dfd, target, 0, depth + 1, why, len);
		}
		close(dfd);
		if (ndfd < 0)
			return ndfd;
		dfd = ndfd;
	}
}

int safe_temp(const char *path, int *dirfd, char *name, size_t namelen, char *why, size_t len)
{
	const char *last;
	int dfd = safe_parent(path, 0, &last, why, len);
	if (dfd < 0)
		return dfd;
	static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	unsigned long long x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32);
	for (int tries = 0; tries < 100; tries++) {
		char suffix[7];
		FILE *r = fopen("/dev/urandom", "re");
		unsigned char b[6] = {0};
		if (r) {
			if (fread(b, 1, sizeof b, r) != sizeof b)
				memset(b, 0, sizeof b);
			fclose(r);
		}
		for (int i = 0; i < 6; i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			suffix[i] = letters[(b[i] ^ (x >> 33)) % (sizeof letters - 1)];
		}
		suffix[6] = 0;
		if ((size_t)snprintf(name, namelen, ".%s.%s", last, suffix) >= namelen) {
			close(dfd);
			return say(why, len, ENAMETOOLONG, "%s: too long", path);
		}
		int fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0) {
			*dirfd = dfd;
			return fd;
		}
		if (errno != EEXIST) {
			int e = errno;
			close(dfd);
			return say(why, len, e, "%s: cannot make a file beside it", path);
		}
	}
	close(dfd);
	return say(why, len, EEXIST, "%s: cannot make a file beside it", path);
}

int safe_commit(int dirfd, const char *name, const char *path)
{
	const char *slash = strrchr(path, '/');
	int rc = renameat(dirfd, name, dirfd, slash ? slash + 1 : path) < 0 ? -errno : 0;
	if (rc < 0)
		unlinkat(dirfd, name, 0);
	close(dirfd);
	return rc;
}

void safe_discard(int dirfd, const char *name)
{
	unlinkat(dirfd, name, 0);
	close(dirfd);
}

int safe_unlink_same(const char *path, int fd)
{
	char why[256];
	const char *last;
	struct stat mine, there;
	if (fstat(fd, &mine) < 0)
		return -errno;
	int dfd = safe_parent(path, 0, &last, why, sizeof why);
	if (dfd < 0)
		return dfd;
	int rc = 0;
	if (fstatat(dfd, last, &there, AT_SYMLINK_NOFOLLOW) < 0)
		rc = -errno;
	else if (there.st_dev != mine.st_dev || there.st_ino != mine.st_ino)
		rc = -ESTALE;	/* another file there now: not ours to remove */
	else if (unlinkat(dfd, last, 0) < 0)
		rc = -errno;
	close(dfd);
	return rc;
}

int safe_private(const char *dir, char *why, size_t len)
{
	char real[PATH_MAX];
	if (!realpath(dir, real))
		return say(why, len, errno, "%s: no such folder", dir);
	char at[PATH_MAX] = "";
	for (char *p = real;;) {
		char *slash = strchr(p + 1, '/');
		size_t k = slash ? (size_t)(slash - real) : strlen(real);
		memcpy(at, real, k ? k : 1);
		at[k ? k : 1] = 0;
		struct stat st;
		if (lstat(at, &st) < 0 || !S_ISDIR(st.st_mode))
			return say(why, len, ENOTDIR, "%s is not a folder", at);
		if (!guarded(&st))
			return say(why, len, EPERM, "%s is a folder another user can write or own: nothing pmcsh runs is kept "
				   "under it", at);
		if (!slash)
			return 0;
		p = slash;
	}
}
