/* pmcsh._sys: what the Lua library needs of the system that Lua lacks:
 * terminals, a monotonic clock, signals, and processes on a pty. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lpmcsh.h"
#include "pty.h"
#include "safepath.h"
#include "counter.h"
#include "../kernels/clock.h"
#include "../kernels/interrupt.h"

#define PTY_MT "pmcsh.pty"

struct lpty {
	int fd;		/* -1 once closed */
	pid_t pid;	/* 0 once reaped */
	int status;
};

static int fail(lua_State *L, int err, const char *what)
{
	luaL_pushfail(L);
	lua_pushfstring(L, "%s: %s", what, strerror(err));
	lua_pushinteger(L, err);
	return 3;
}

static int fd_of(lua_State *L, int idx)
{
	static const char *const names[] = {"stdin", "stdout", "stderr", NULL};
	if (lua_type(L, idx) == LUA_TSTRING)
		return luaL_checkoption(L, idx, NULL, names);
	return (int)luaL_checkinteger(L, idx);
}

static int sys_isatty(lua_State *L)
{
	lua_pushboolean(L, isatty(fd_of(L, 1)));
	return 1;
}

/* _sys.columns(fd) -> the terminal's width in columns, or nil where fd is
 * no terminal or the terminal does not say (TIOCGWINSZ). */
static int sys_columns(lua_State *L)
{
	struct winsize ws;
	if (ioctl(fd_of(L, 1), TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0)
		luaL_pushfail(L);
	else
		lua_pushinteger(L, ws.ws_col);
	return 1;
}

static int sys_now(lua_State *L)
{
	lua_pushnumber(L, mono_s());
	return 1;
}

/* The environment's numeric conventions (LC_ALL, LC_NUMERIC, LANG), read
 * without changing pmcsh's own C locale: {thousands_sep=, decimal_point=,
 * grouping={3, ...}} (grouping's last size repeats); C's where the named
 * locale is not installed. */
static int sys_numeric_locale(lua_State *L)
{
	locale_t loc = newlocale(LC_NUMERIC_MASK, "", (locale_t)0);
	if (!loc)
		loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (!loc)
		return luaL_error(L, "newlocale: %s", strerror(errno));
	const char *g = nl_langinfo_l(GROUPING, loc);
	lua_createtable(L, 0, 3);
	lua_pushstring(L, nl_langinfo_l(THOUSEP, loc));
	lua_setfield(L, -2, "thousands_sep");
	lua_pushstring(L, nl_langinfo_l(RADIXCHAR, loc));
	lua_setfield(L, -2, "decimal_point");
	lua_newtable(L);
	for (int i = 0; g[i] > 0 && g[i] != CHAR_MAX; i++) {
		lua_pushinteger(L, g[i]);
		lua_rawseti(L, -2, i + 1);
	}
	lua_setfield(L, -2, "grouping");
	freelocale(loc);
	return 1;
}

static int sys_getpid(lua_State *L)
{
	lua_pushinteger(L, getpid());
	return 1;
}

static int sys_geteuid(lua_State *L)
{
	lua_pushinteger(L, geteuid());
	return 1;
}

static int sys_kill(lua_State *L)
{
	pid_t pid = (pid_t)luaL_checkinteger(L, 1);
	int sig = (int)luaL_optinteger(L, 2, SIGTERM);
	if (kill(pid, sig) < 0)
		return fail(L, errno, "kill");
	lua_pushboolean(L, 1);
	return 1;
}

static int sys_sleep(lua_State *L)
{
	double s = luaL_checknumber(L, 1);
	luaL_argcheck(L, s >= 0 && s <= 1e9, 1, "a duration from 0 to 1e9 seconds expected");
	struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !pmcsh_stop_requested())
		;  /* Ctrl-C ends it: the host's hook raises next */
	return 0;
}

/* ---- pty --------------------------------------------------------------- */

static struct lpty *check_pty(lua_State *L)
{
	struct lpty *p = luaL_checkudata(L, 1, PTY_MT);
	if (p->fd < 0)
		luaL_error(L, "attempt to use a closed pty");
	return p;
}

static void reap(struct lpty *p)
{
	if (p->pid > 0) {
		p->status = pty_wait(p->pid);
		p->pid = 0;
	}
}

/* One close for :close(), __gc and __close: kills a running child. */
static int pty_close(lua_State *L)
{
	struct lpty *p = luaL_checkudata(L, 1, PTY_MT);
	if (p->pid > 0)
		kill(p->pid, SIGKILL);
	reap(p);
	if (p->fd >= 0) {
		close(p->fd);
		p->fd = -1;
	}
	return 0;
}

/* sys.spawn_pty(argv [, env]) -> pty | fail, msg, errno.  env is a list of
 * "K=V" strings replacing the environment. */
static int sys_spawn_pty(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TTABLE);
	int argc = (int)luaL_len(L, 1);
	luaL_argcheck(L, argc > 0, 1, "empty command");
	int envc = lua_istable(L, 2) ? (int)luaL_len(L, 2) : -1;
	struct lpty *p = pmcsh_newhandle(L, sizeof *p, 0, PTY_MT);
	int pidx = lua_gettop(L);
	p->fd = -1;
	p->pid = 0;
	p->status = -1;
	/* the strings stay alive on the Lua stack until exec */
	char **argv = lua_newuserdatauv(L, sizeof(char *) * ((size_t)argc + 1), 0);
	for (int i = 0; i < argc; i++) {
		lua_rawgeti(L, 1, i + 1);
		argv[i] = (char *)pmcsh_checkstring(L, -1);
		lua_pop(L, 1);	/* table keeps it alive */
	}
	argv[argc] = NULL;
	char **envp = NULL;
	if (envc >= 0) {
		envp = lua_newuserdatauv(L, sizeof(char *) * ((size_t)envc + 1), 0);
		for (int i = 0; i < envc; i++) {
			lua_rawgeti(L, 2, i + 1);
			envp[i] = (char *)pmcsh_checkstring(L, -1);
			lua_pop(L, 1);
		}
		envp[envc] = NULL;
	}
	int r = pty_spawn(argv, envp, &p->pid, &p->fd);
	if (r < 0)
		return fail(L, -r, "forkpty");
	lua_pushvalue(L, pidx);
	return 1;
}

/* p:read([timeout_s]) -> text ("" on timeout) | nil at end of output. */
static int pty_lread(lua_State *L)
{
	struct lpty *p = check_pty(L);
	double t = luaL_optnumber(L, 2, 0.1);
	luaL_argcheck(L, t >= 0 && t <= 86400, 2, "a timeout from 0 to 86400 seconds expected");
	int ms = (int)(t * 1000);
	char buf[4096];
	ssize_t n = pty_read(p->fd, buf, sizeof buf, ms);
	if (n == -EIO)
		return 0;
	if (n < 0)
		return fail(L, (int)-n, "read");
	lua_pushlstring(L, buf, (size_t)n);
	return 1;
}

static int pty_lwrite(lua_State *L)
{
	struct lpty *p = check_pty(L);
	size_t len;
	const char *s = luaL_checklstring(L, 2, &len);
	int r = pty_write(p->fd, s, len);
	if (r < 0)
		return fail(L, -r, "write");
	lua_settop(L, 1);
	return 1;
}

static int pty_lkill(lua_State *L)
{
	struct lpty *p = check_pty(L);
	int sig = (int)luaL_optinteger(L, 2, SIGTERM);
	if (p->pid > 0 && kill(p->pid, sig) < 0)
		return fail(L, errno, "kill");
	lua_pushboolean(L, 1);
	return 1;
}

/* p:wait() -> exit status (128+signal when killed). */
static int pty_lwait(lua_State *L)
{
	struct lpty *p = check_pty(L);
	reap(p);
	lua_pushinteger(L, p->status);
	return 1;
}

static int pty_pid(lua_State *L)
{
	lua_pushinteger(L, check_pty(L)->pid);
	return 1;
}

/* ---- files as a careful Unix tool writes them ----------------------------
 * Handles are Lua's own (LUA_FILEHANDLE), so io's methods work on them. */

static int stream_close(lua_State *L)
{
	luaL_Stream *p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
	return luaL_fileresult(L, fclose(p->f) == 0, NULL);
}

/* Leaves a Lua file handle over fd (fdopen's mode) on the stack; the
 * handle owns fd from here, closed on failure too.  1, or fail's 3. */
static int push_stream(lua_State *L, int fd, const char *mode, const char *path)
{
	luaL_Stream *p = lua_newuserdatauv(L, sizeof *p, 0);
	p->closef = NULL;   /* closed until fdopen succeeds */
	luaL_setmetatable(L, LUA_FILEHANDLE);
	p->f = fdopen(fd, mode);
	if (!p->f) {
		int e = errno;
		close(fd);
		return fail(L, e, path);
	}
	p->closef = stream_close;
	return 1;
}

/* fail's 3 for path, with why in words, after closing fd (-1: none). */
static int refuse(lua_State *L, int fd, int err, const char *path, const char *why)
{
	if (fd >= 0)
		close(fd);
	return pmcsh_fail(L, lua_pushfstring(L, "%s: %s", path, why), err);
}

/* _sys.open(path, how) -> file, size, kind | fail, msg, errno
 * Every folder on the way is walked as core/safepath.c walks it: a link is
 * followed only where it is this user's or root's (ELOOP otherwise).
 *   "new"    a file made here (O_CREAT|O_EXCL|O_NOFOLLOW): never an existing
 *            name, never through a link (EEXIST)
 *   "append" an existing file to read and add to ("a+"): a regular file of
 *            this user's with no other name (another's is EPERM, one with
 *            hard links EMLINK), or a device or FIFO of this user's or
 *            root's (kind "device"); a link at the name followed as above
 *   "read"   a regular file, links followed as above; a FIFO, a device or
 *            a file of the kernel's (procfs, sysfs) is refused (EINVAL)
 *            without waiting on it. */
static int sys_open(lua_State *L)
{
	static const char *const hows[] = {"new", "append", "read", NULL};
	const char *path = pmcsh_checkstring(L, 1);
	int how = luaL_checkoption(L, 2, NULL, hows);
	char why[512];
	int fd;
	if (how == 0)
		fd = safe_open(path, O_WRONLY | O_CREAT | O_EXCL, 0666, 0, why, sizeof why);
	else if (how == 1)
		fd = safe_open(path, O_RDWR | O_APPEND | O_NONBLOCK, 0, 1, why, sizeof why);
	else
		fd = safe_open(path, O_RDONLY | O_NONBLOCK, 0, 1, why, sizeof why);
	if (fd < 0) {
		if (-fd == EISDIR)
			return refuse(L, -1, EISDIR, path, "a folder");
		return pmcsh_fail(L, why, -fd);
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		return refuse(L, fd, errno, path, strerror(errno));
	int regular = S_ISREG(st.st_mode);
	if (how == 1 && regular && st.st_uid != geteuid())
		return refuse(L, fd, EPERM, path, "a file of another user's: pmcsh adds to none");
	if (how == 1 && regular && st.st_nlink > 1)	/* a hard link planted to a file elsewhere */
		return refuse(L, fd, EMLINK, path, "a file with other names (hard links): pmcsh adds to none");
	if (how == 1 && !regular && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
		return refuse(L, fd, EINVAL, path, "not a regular file");
	if (how == 1 && !regular && st.st_uid != geteuid() && st.st_uid != 0)	/* a FIFO planted to hang us */
		return refuse(L, fd, EPERM, path, "a FIFO or device of another user's: pmcsh writes to none");
	struct statfs sf;
	if (how == 2 && (!regular || (fstatfs(fd, &sf) == 0 && (sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC))))
		return refuse(L, fd, EINVAL, path, "not a regular file");
	if (how != 0 && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0)
		return refuse(L, fd, errno, path, strerror(errno));
	static const char *const modes[] = {"w", "a+", "r"};
	if (push_stream(L, fd, modes[how], path) != 1)
		return 3;
	lua_pushinteger(L, (lua_Integer)st.st_size);
	lua_pushstring(L, regular ? "file" : "device");
	return 3;
}

/* ---- replacements: a temporary beside the target, renamed over it ---- */

#define TEMP_MT "pmcsh.temp"

struct ltemp {
	int dirfd;		/* the target's folder, as walked; -1 once done */
	char name[NAME_MAX + 1];	/* the temporary's name in it */
	char path[PATH_MAX];	/* the target */
};

static int temp_discard(lua_State *L)
{
	struct ltemp *t = luaL_checkudata(L, 1, TEMP_MT);
	if (t->dirfd >= 0)
		safe_discard(t->dirfd, t->name);
	t->dirfd = -1;
	return 0;
}

/* t:commit() -> true | fail, msg, errno: the temporary renamed over the
 * target, in the folder walked when it was made (never elsewhere). */
static int temp_commit(lua_State *L)
{
	struct ltemp *t = luaL_checkudata(L, 1, TEMP_MT);
	luaL_argcheck(L, t->dirfd >= 0, 1, "a replacement already committed or discarded");
	int rc = safe_commit(t->dirfd, t->name, t->path);
	t->dirfd = -1;
	if (rc < 0)
		return fail(L, -rc, t->path);
	lua_pushboolean(L, 1);
	return 1;
}

/* _sys.replacement(path) -> file ("w+"), temp | fail, msg, errno: a new
 * file beside path, in its folder walked safely; temp:commit() renames it
 * over path, temp:discard() (or the collector) removes it. */
static int sys_replacement(lua_State *L)
{
	const char *path = pmcsh_checkstring(L, 1);
	char why[512];
	struct ltemp *t = pmcsh_newhandle(L, sizeof *t, 0, TEMP_MT);
	t->dirfd = -1;
	snprintf(t->path, sizeof t->path, "%s", path);
	int dirfd;
	int fd = safe_temp(path, &dirfd, t->name, sizeof t->name, why, sizeof why);
	if (fd < 0) {
		return pmcsh_fail(L, why, -fd);
	}
	t->dirfd = dirfd;
	if (push_stream(L, fd, "w+", path) != 1)
		return 3;
	lua_insert(L, -2);
	return 2;
}

/* _sys.private(dir) -> true | fail, msg, errno: every folder from / to
 * dir is this user's or root's and written by nobody else (or sticky): a
 * place to keep what pmcsh will run later (safepath.h). */
static int sys_private(lua_State *L)
{
	char why[512];
	int rc = safe_private(pmcsh_checkstring(L, 1), why, sizeof why);
	if (rc < 0) {
		return pmcsh_fail(L, why, -rc);
	}
	lua_pushboolean(L, 1);
	return 1;
}

/* _sys.mkdtemp(prefix) -> the name of a new folder PREFIXxxxxxx, mode
 * 0700 (mkdtemp) | fail, msg, errno: a private place to build in. */
static int sys_mkdtemp(lua_State *L)
{
	const char *prefix = pmcsh_checkstring(L, 1);
	char name[PATH_MAX];
	if (snprintf(name, sizeof name, "%sXXXXXX", prefix) >= (int)sizeof name)
		return fail(L, ENAMETOOLONG, prefix);
	if (!mkdtemp(name))
		return fail(L, errno, prefix);
	lua_pushstring(L, name);
	return 1;
}

/* _sys.remove_same(path, file) -> true | fail, msg, errno: removes path
 * only while it is still that open file, found by walking its folder
 * safely (a folder renamed and a link put in its place remove nothing). */
static int sys_remove_same(lua_State *L)
{
	const char *path = pmcsh_checkstring(L, 1);
	luaL_Stream *p = luaL_checkudata(L, 2, LUA_FILEHANDLE);
	luaL_argcheck(L, p->closef != NULL, 2, "closed file");
	int rc = safe_unlink_same(path, fileno(p->f));
	if (rc < 0)
		return fail(L, -rc, path);
	lua_pushboolean(L, 1);
	return 1;
}

/* _sys.lock(file) -> true | nil, msg, errno: an exclusive flock on a Lua
 * file handle, without waiting (EWOULDBLOCK: another process holds it).
 * The lock goes with the handle's close. */
static int sys_lock(lua_State *L)
{
	luaL_Stream *p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
	luaL_argcheck(L, p->closef != NULL, 1, "closed file");
	if (flock(fileno(p->f), LOCK_EX | LOCK_NB) < 0)
		return luaL_fileresult(L, 0, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/* _sys.interrupted() -> whether Ctrl-C was pressed during this command:
 * how an error is known to be an interrupt by its cause, not its text. */
static int sys_interrupted(lua_State *L)
{
	lua_pushboolean(L, pmcsh_interrupted != 0);
	return 1;
}

/* _sys.truncate(file, size): cuts the open file to size bytes (a torn
 * last line of a results file, before appending).  true, or fail, msg, errno. */
static int sys_truncate(lua_State *L)
{
	luaL_Stream *p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
	lua_Integer size = luaL_checkinteger(L, 2);
	luaL_argcheck(L, p->closef != NULL, 1, "closed file");
	luaL_argcheck(L, size >= 0, 2, "size must not be negative");
	if (fflush(p->f) != 0 || ftruncate(fileno(p->f), (off_t)size) < 0)
		return luaL_fileresult(L, 0, NULL);
	lua_pushboolean(L, 1);
	return 1;
}

/* _sys.stat(path[, link]) -> {type = "file"|"dir"|"link"|"other", size =, uid =, mode =, mtime =}
 * | nil, msg, errno; with link true a link is itself ("link"), not followed. */
static int sys_stat(lua_State *L)
{
	const char *path = pmcsh_checkstring(L, 1);
	struct stat st;
	if ((lua_toboolean(L, 2) ? lstat(path, &st) : stat(path, &st)) < 0)
		return luaL_fileresult(L, 0, path);
	lua_createtable(L, 0, 5);
	lua_pushstring(L, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "link" : "other");
	lua_setfield(L, -2, "type");
	lua_pushinteger(L, (lua_Integer)st.st_size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, (lua_Integer)st.st_uid);
	lua_setfield(L, -2, "uid");
	lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
	lua_setfield(L, -2, "mode");
	lua_pushinteger(L, (lua_Integer)st.st_mtim.tv_sec);
	lua_setfield(L, -2, "mtime");
	return 1;
}

/* _sys.dir(path) -> {names...} (unsorted, no "." or "..") | nil, msg, errno */
static int sys_dir(lua_State *L)
{
	const char *path = pmcsh_checkstring(L, 1);
	DIR *d = opendir(path);
	if (!d)
		return luaL_fileresult(L, 0, path);
	lua_newtable(L);
	lua_Integer n = 0;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			lua_pushstring(L, e->d_name);
			lua_rawseti(L, -2, ++n);
		}
	closedir(d);
	return 1;
}

/* _sys.realpath(path) -> the absolute path | nil, msg, errno */
static int sys_realpath(lua_State *L)
{
	char *r = realpath(pmcsh_checkstring(L, 1), NULL);
	if (!r)
		return luaL_fileresult(L, 0, lua_tostring(L, 1));
	lua_pushstring(L, r);
	free(r);
	return 1;
}

/* _sys.mkdir(path[, mode]) -> true (made, with the folders above it, with
 * mode (default 0777) under the umask, or a folder already) | nil, msg,
 * errno; the folders walked as safepath walks them. */
static int sys_mkdir(lua_State *L)
{
	const char *path = pmcsh_checkstring(L, 1);
	char why[512];
	int fd = safe_dir(path, (int)luaL_optinteger(L, 2, 0777) & 07777, why, sizeof why);
	if (fd < 0) {
		return pmcsh_fail(L, why, -fd);
	}
	close(fd);
	lua_pushboolean(L, 1);
	return 1;
}

static int item_push(void *ctx, const char *item, size_t len)
{
	lua_State *L = ctx;
	lua_pushlstring(L, item, len);
	lua_seti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
	return 0;
}

/* split_list(s[, keep_empty]) -> {item, ...}: a comma list split as the
 * event-name grammar splits it (pmc_split_list, core/evname.c), commas
 * inside a pmu/term=v,term=v/ kept: option values' one splitter. */
static int sys_split_list(lua_State *L)
{
	const char *s = pmcsh_checkstring(L, 1);
	int keep = lua_toboolean(L, 2);
	lua_newtable(L);
	pmc_split_list(s, keep, item_push, L);
	return 1;
}

static const luaL_Reg sys_funcs[] = {
	{"split_list", sys_split_list},
	{"realpath", sys_realpath},
	{"mkdir", sys_mkdir},
	{"dir", sys_dir},
	{"lock", sys_lock},
	{"open", sys_open},
	{"replacement", sys_replacement},
	{"remove_same", sys_remove_same},
	{"mkdtemp", sys_mkdtemp},
	{"private", sys_private},
	{"stat", sys_stat},
	{"interrupted", sys_interrupted},
	{"truncate", sys_truncate},
	{"isatty", sys_isatty},
	{"columns", sys_columns},
	{"now", sys_now},
	{"getpid", sys_getpid},
	{"numeric_locale", sys_numeric_locale},
	{"geteuid", sys_geteuid},
	{"kill", sys_kill},
	{"sleep", sys_sleep},
	{"spawn_pty", sys_spawn_pty},
	{NULL, NULL}
};

static const luaL_Reg pty_methods[] = {
	{"read", pty_lread},
	{"write", pty_lwrite},
	{"kill", pty_lkill},
	{"wait", pty_lwait},
	{"pid", pty_pid},
	{"close", pty_close},
	{NULL, NULL}
};

static const luaL_Reg pty_meta[] = {
	{"__index", NULL},
	{"__gc", pty_close},
	{"__close", pty_close},
	{NULL, NULL}
};

int luaopen_pmcsh__sys(lua_State *L)
{
	luaL_newlib(L, sys_funcs);
	pmcsh_newclass(L, PTY_MT, pty_meta, pty_methods);
	static const luaL_Reg temp_methods[] = {{"commit", temp_commit}, {"discard", temp_discard}, {NULL, NULL}};
	static const luaL_Reg temp_meta[] = {{"__index", NULL}, {"__gc", temp_discard}, {"__close", temp_discard},
					     {NULL, NULL}};
	pmcsh_newclass(L, TEMP_MT, temp_meta, temp_methods);
	pmcsh_setstr(L, "VERSION", PMCSH_VERSION);
	lua_pushinteger(L, SIGINT);
	lua_setfield(L, -2, "SIGINT");
	lua_pushinteger(L, SIGKILL);
	lua_setfield(L, -2, "SIGKILL");
	lua_pushinteger(L, SIGTERM);
	lua_setfield(L, -2, "SIGTERM");
	lua_pushinteger(L, EINTR);   /* the errno of an interrupt, in every engine's nil, "interrupted", EINTR */
	lua_setfield(L, -2, "EINTR");
	/* the errnos callers decide on (never on a message's text) */
	static const struct { const char *name; int value; } errnos[] = {
		{"EPERM", EPERM}, {"ENOENT", ENOENT}, {"ENXIO", ENXIO}, {"EACCES", EACCES}, {"ENODEV", ENODEV},
		{"EINVAL", EINVAL}, {"ENOSYS", ENOSYS}, {"EOPNOTSUPP", EOPNOTSUPP}, {"EAGAIN", EAGAIN},
		{"EWOULDBLOCK", EWOULDBLOCK}, {"EBUSY", EBUSY}, {"ESRCH", ESRCH}, {"ENOMEM", ENOMEM},
		{"EEXIST", EEXIST}, {"ENOEXEC", ENOEXEC}, {"ELOOP", ELOOP}, {"ENOLCK", ENOLCK}, {"ENOTSUP", ENOTSUP}, {"EISDIR", EISDIR},
	};
	for (size_t i = 0; i < sizeof errnos / sizeof errnos[0]; i++) {
		lua_pushinteger(L, errnos[i].value);
		lua_setfield(L, -2, errnos[i].name);
	}
	pmcsh_errormeta(L);   /* errors that say their kind (lpmcsh.h) */
	lua_setfield(L, -2, "error_mt");
	return 1;
}
