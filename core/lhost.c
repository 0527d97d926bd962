/* pmcsh host: main(), command-line handling after lua.c's conventions, and
 * the dispatch of recipes.  The REPL lives in lrepl.c. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

#include "lhost.h"
#include "lpmcsh.h"
#include "interrupt.h"

#define EXIT_USAGE 2

static const char *progname = "pmcsh";
static lua_State *active_state;

/* Ctrl-C while Lua runs: flag for C engines, and a hook that raises an error
 * at the next Lua instruction.  A second Ctrl-C before the hook fires kills,
 * as in lua.c, so a stuck C call can still be left. */
static void stop_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	luaL_error(L, "interrupted!");
}

static void on_sigint(int sig)
{
	pmcsh_interrupted = 1;
	if (active_state) {
		signal(sig, SIG_DFL);
		lua_sethook(active_state, stop_hook,
			    LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
	}
}

void host_install_sigint(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

void host_message(const char *msg)
{
	fprintf(stderr, "%s: %s\n", progname, msg);
	fflush(stderr);
}

/* Message handler: adds a traceback to string errors; a usage error (a table
 * with field usage) passes through untouched. */
static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL) {
		if (lua_type(L, 1) == LUA_TTABLE)
			return 1;
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	if (strstr(msg, "\nstack traceback:"))	/* a recipe's error, traced where it arose */
		return 1;
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* Calls the function below its `narg` arguments with the traceback handler
 * and Ctrl-C armed.  Leaves results or the error object on the stack. */
int host_docall(lua_State *L, int narg, int nres)
{
	int base = lua_gettop(L) - narg;
	lua_pushcfunction(L, msghandler);
	lua_insert(L, base);
	pmcsh_interrupted = 0;
	active_state = L;
	host_install_sigint();
	int status = lua_pcall(L, narg, nres, base);
	active_state = NULL;
	lua_sethook(L, NULL, 0, 0);
	host_install_sigint(); /* re-arm after a first Ctrl-C set SIG_DFL */
	lua_remove(L, base);
	return status;
}

/* Reports an error object on top of the stack; returns the exit status it
 * stands for: 2 for a usage error, 1 otherwise. */
int host_report(lua_State *L, int status)
{
	if (status == LUA_OK)
		return 0;
	int code = 1;
	if (lua_type(L, -1) == LUA_TTABLE) {
		lua_getfield(L, -1, "usage");
		if (lua_toboolean(L, -1))
			code = EXIT_USAGE;
		lua_pop(L, 1);
		lua_getfield(L, -1, "message");
		host_message(lua_isstring(L, -1) ? lua_tostring(L, -1) : "error");
		lua_pop(L, 1);
	} else {
		host_message(lua_tostring(L, -1));
	}
	lua_pop(L, 1);
	return code;
}

static int dochunk(lua_State *L, int status)
{
	if (status == LUA_OK)
		status = host_docall(L, 0, 0);
	return host_report(L, status);
}

/* ---- where the Lua library and recipes are ---------------------------- */

static int has_library(const char *root)
{
	char p[PATH_MAX + 32];
	struct stat st;
	snprintf(p, sizeof p, "%s/lua/pmcsh/recipe.lua", root);
	return stat(p, &st) == 0;
}

/* The tree or install the binary belongs to: its own folder (./pmcsh in the
 * source tree), that folder's parent (build-x/pmcsh), or PREFIX/share/pmcsh
 * beside PREFIX/bin.  PMCSH_HOME overrides, for development only. */
static int find_root(char *exe, char *root, size_t len)
{
	char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	const char *home = getenv("PMCSH_HOME");
	if (home && *home) {
		snprintf(root, len, "%s", home);
		return 0;
	}
	snprintf(dir, sizeof dir, "%s", exe);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	snprintf(root, len, "%s", dir);
	if (has_library(root))
		return 0;
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		snprintf(root, len, "%s", dir);
		if (has_library(root))
			return 0;
		if (strlen(dir) + sizeof "/share/pmcsh" > len)
			return -ENAMETOOLONG;
		memcpy(root, dir, strlen(dir));
		strcpy(root + strlen(dir), "/share/pmcsh");
		if (has_library(root))
			return 0;
	}
	return -ENOENT;
}

/* Sets package.path to the library first and registers pmcsh.paths. */
static int setup_paths(lua_State *L)
{
	char exe[PATH_MAX], root[PATH_MAX];
	if (find_root(exe, root, sizeof root) < 0) {
		host_message("cannot find the pmcsh Lua library (lua/pmcsh) beside the "
			     "binary or in ../share/pmcsh; reinstall with make install");
		return -1;
	}
	lua_getglobal(L, "package");
	lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;", root, root);
	lua_getfield(L, -2, "path");
	lua_concat(L, 2);
	lua_setfield(L, -2, "path");
	lua_getfield(L, -1, "loaded");
	lua_createtable(L, 0, 6);
	lua_pushstring(L, exe);
	lua_setfield(L, -2, "exe");
	lua_pushstring(L, root);
	lua_setfield(L, -2, "root");
	const char *sub[] = {"lua", "scripts", "events"};
	for (int i = 0; i < 3; i++) {
		lua_pushfstring(L, "%s/%s", root, sub[i]);
		lua_setfield(L, -2, sub[i]);
	}
	lua_pushstring(L, PMCSH_VERSION);
	lua_setfield(L, -2, "version");
	lua_setfield(L, -2, "pmcsh.paths");
	lua_pop(L, 2);
	return 0;
}

/* ---- command line ------------------------------------------------------ */

static void print_version(void)
{
	printf("pmcsh %s (%s)\n", PMCSH_VERSION, LUA_RELEASE);
	fflush(stdout);
}

/* Calls require("pmcsh.recipe")[fn] with the strings argv[from..argc-1];
 * returns its integer result as the exit status. */
static int call_recipe_lib(lua_State *L, const char *fn, char **argv, int from, int argc)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "pmcsh.recipe");
	int status = host_docall(L, 1, 1);
	if (status != LUA_OK)
		return host_report(L, status);
	lua_getfield(L, -1, fn);
	lua_remove(L, -2);
	for (int i = from; i < argc; i++)
		lua_pushstring(L, argv[i]);
	status = host_docall(L, argc - from, 1);
	if (status != LUA_OK)
		return host_report(L, status);
	int code = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return code;
}

static int usage(lua_State *L)
{
	printf("usage: %s [options] [script [args]] | %s RECIPE [--option value ...]\n"
	       "Available options are:\n"
	       "  -e stat   execute string 'stat'\n"
	       "  -i        enter interactive mode after executing 'script'\n"
	       "  -l mod    require library 'mod' into global 'mod'\n"
	       "  -l g=mod  require library 'mod' into global 'g'\n"
	       "  -v        show version information\n"
	       "  -h        show this help, and the recipes\n"
	       "  --        stop handling options\n"
	       "  -         stop handling options and execute stdin\n"
	       "With no arguments: the REPL on a terminal, otherwise stdin as a script.\n"
	       "RECIPE --help shows a recipe's options.\n\n",
	       progname, progname);
	fflush(stdout);
	char *none[] = {NULL};
	return call_recipe_lib(L, "print_list", none, 0, 0);
}

static void create_arg_table(lua_State *L, char **argv, int argc, int script)
{
	lua_createtable(L, argc - script - 1, script + 1);
	for (int i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - script);
	}
	lua_setglobal(L, "arg");
}

static int dolibrary(lua_State *L, char *spec)
{
	char *eq = strchr(spec, '=');
	const char *global = spec, *mod = spec;
	if (eq) {
		*eq = '\0';
		mod = eq + 1;
	}
	lua_getglobal(L, "require");
	lua_pushstring(L, mod);
	int status = host_docall(L, 1, 1);
	if (status == LUA_OK)
		lua_setglobal(L, global);
	return host_report(L, status);
}

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

static int run_script(lua_State *L, char **argv, int argc, int script)
{
	const char *fname = argv[script];
	if (strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
		fname = NULL; /* stdin */
	int status = luaL_loadfile(L, fname);
	if (status != LUA_OK)
		return host_report(L, status);
	int nargs = argc - script - 1;
	luaL_checkstack(L, nargs + 3, "too many arguments to script");
	for (int i = script + 1; i < argc; i++)
		lua_pushstring(L, argv[i]);
	status = host_docall(L, nargs, 0);
	return host_report(L, status);
}

/* The whole program, run protected: returns the exit status. */
static int pmain(lua_State *L)
{
	int argc = (int)lua_tointeger(L, 1);
	char **argv = (char **)lua_touserdata(L, 2);
	lua_settop(L, 0);
	luaL_openlibs(L);
	pmcsh_preload(L);
	if (setup_paths(L) < 0) {
		lua_pushinteger(L, 1);
		return 1;
	}
	host_install_sigint();

	/* First pass: find the script and flags, reject bad options. */
	int interactive = 0, version = 0, has_e = 0, script = 0, i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-') {
			script = i;
			break;
		}
		if (strcmp(a, "-") == 0) {
			script = i;
			break;
		}
		if (strcmp(a, "--") == 0) {
			if (i + 1 < argc)
				script = i + 1;
			break;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			lua_pushinteger(L, usage(L));
			return 1;
		}
		if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
			version = 1;
		} else if (strcmp(a, "-i") == 0) {
			interactive = version = 1;
		} else if (a[1] == 'e' || a[1] == 'l') {
			if (a[2] == '\0' && ++i >= argc) {
				fprintf(stderr, "%s: '%s' needs argument\n", progname, a);
				lua_pushinteger(L, EXIT_USAGE);
				return 1;
			}
			has_e |= a[1] == 'e';
		} else {
			fprintf(stderr, "%s: unrecognized option '%s'\n"
				"Try '%s --help' for the options and recipes.\n", progname, a, progname);
			lua_pushinteger(L, EXIT_USAGE);
			return 1;
		}
	}
	if (version)
		print_version();

	/* A NAME that is no file is a recipe: the host parses its options. */
	if (script && argv[script][0] != '-' && !is_file(argv[script]) &&
	    strcmp(argv[script - 1], "--") != 0 && !strchr(argv[script], '/') &&
	    !strstr(argv[script], ".lua")) {
		int code = call_recipe_lib(L, "main", argv, script, argc);
		lua_pushinteger(L, code);
		return 1;
	}

	create_arg_table(L, argv, argc, script);

	/* Second pass: run -e and -l in order. */
	for (i = 1; i < (script ? script : argc); i++) {
		char *a = argv[i];
		if (a[0] != '-' || (a[1] != 'e' && a[1] != 'l'))
			continue;
		char *val = a[2] ? a + 2 : argv[++i];
		int code;
		if (a[1] == 'e')
			code = dochunk(L, luaL_loadbuffer(L, val, strlen(val), "=(command line)"));
		else
			code = dolibrary(L, val);
		if (code) {
			lua_pushinteger(L, code);
			return 1;
		}
	}

	int code = 0;
	if (script) {
		if (strcmp(argv[script], "-") != 0 && !is_file(argv[script])) {
			fprintf(stderr, "%s: cannot open %s: no such file\n", progname, argv[script]);
			lua_pushinteger(L, EXIT_USAGE);
			return 1;
		}
		code = run_script(L, argv, argc, script);
	}
	if (code == 0) {
		if (interactive)
			code = repl_run(L);
		else if (!script && !has_e && !version) {
			if (isatty(STDIN_FILENO))
				code = repl_run(L);
			else
				code = dochunk(L, luaL_loadfile(L, NULL));
		}
	}
	lua_pushinteger(L, code);
	return 1;
}

int main(int argc, char **argv)
{
	lua_State *L = luaL_newstate();
	if (L == NULL) {
		fprintf(stderr, "%s: cannot create state: not enough memory\n", progname);
		return 1;
	}
	lua_pushcfunction(L, pmain);
	lua_pushinteger(L, argc);
	lua_pushlightuserdata(L, argv);
	int status = lua_pcall(L, 2, 1, 0);
	int code = status == LUA_OK ? (int)lua_tointeger(L, -1) : 1;
	if (status != LUA_OK)
		host_message(lua_tostring(L, -1));
	fflush(stdout);
	lua_close(L);
	return code;
}
