/* pmcsh host: main(), command-line handling after lua.c's conventions, and
 * the dispatch of recipes.  The REPL lives in lrepl.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lua.h>
#include <lualib.h>
#include <lauxlib.h>

#include "lrepl.h"
#include "lpmcsh.h"
#include "../kernels/clock.h"
#include "../kernels/interrupt.h"
#include "pfmforced.h"

#define EXIT_USAGE 2

/* Built with AddressSanitizer (make asan): specs whose physics its shadow
 * memory changes read pmcsh.paths.sanitized. */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PMCSH_SANITIZED 1
#endif
#elif defined(__SANITIZE_ADDRESS__)
#define PMCSH_SANITIZED 1
#endif
#ifndef PMCSH_SANITIZED
#define PMCSH_SANITIZED 0
#endif

static const char *progname = "pmcsh";
static int in_repl;  /* messages then name no program, as lua.c's in interactive mode */
static lua_State *active_state;
/* The kernel marked this process secure (AT_SECURE: file capabilities such
 * as cap_perfmon): paths from the environment and the user's recipe
 * folders are not trusted. */
static int secure;

/* Ctrl-C while Lua runs: flag for C engines, and a hook that raises an error
 * at the next Lua instruction.  A second Ctrl-C while the first is unserved
 * kills, as in lua.c, unless pmcsh's own C loop is running: each looks at
 * the flag (pmcsh_interrupt_seen) and returns within 0.5 s, so a second
 * press then (a double press) is absorbed until the first has gone
 * unserved for STUCK_NS.  A C call that never looks (string.find, a user's
 * C module) is killed by a second press as lua's is, after GRACE_NS, which
 * keeps two presses of one burst ("\3\3" on a pty) as one. */
#define STUCK_NS 2000000000LL
#define GRACE_NS 50000000LL
static long long armed_at;  /* when the unserved hook was set */

static long long sigint_now(void)
{
	return mono_ns64();  /* async-signal-safe */
}

/* Serves the press: the engines called after the error (a pcall caught
 * it) run again, as Lua code does after lua.c's. */
static void stop_hook(lua_State *L, lua_Debug *ar)
{
	(void)ar;
	lua_sethook(L, NULL, 0, 0);
	pmcsh_interrupt_served = 1;
	luaL_error(L, "interrupted!");
}

static void on_sigint(int sig)
{
	int armed = active_state && lua_gethook(active_state) == stop_hook;  /* a C call still runs */
	if (!armed)
		pmcsh_interrupt_seen = 0;  /* before the flag, which an engine may see at once */
	pmcsh_interrupted = 1;
	pmcsh_interrupt_served = 0;
	if (!active_state)
		return;
	long long waited = armed ? sigint_now() - armed_at : 0;
	if (armed && (waited > STUCK_NS || (waited > GRACE_NS && !pmcsh_interrupt_seen))) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	if (!armed)
		armed_at = sigint_now();
	lua_sethook(active_state, stop_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

static void host_install_sigint(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

static void host_message(const char *msg)
{
	if (!in_repl)
		fprintf(stderr, "%s: ", progname);
	fprintf(stderr, "%s\n", msg);
	fflush(stderr);
}

/* Whether the value at idx is an error object (lpmcsh.h) of kind usage
 * (errors.usage, recipe.usage). */
static int is_usage(lua_State *L, int idx)
{
	idx = lua_absindex(L, idx);
	if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx))
		return 0;
	pmcsh_errormeta(L);
	int u = lua_rawequal(L, -1, -2);
	lua_pop(L, 2);
	if (u) {
		lua_getfield(L, idx, "kind");
		u = lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "usage") == 0;
		lua_pop(L, 1);
	}
	return u;
}

/* lua.c's message handler: a traceback after a string; __tostring of an
 * object that has one; "(error object is a X value)" otherwise.  pmcsh's
 * usage errors pass through for host_report, and a recipe's error already
 * traced where it arose is not traced twice. */
static int msghandler(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);
	if (msg == NULL) {
		if (is_usage(L, 1))
			return 1;
		if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
			return 1;
		msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
	}
	if (strstr(msg, "\nstack traceback:"))
		return 1;
	luaL_traceback(L, L, msg, 1);
	return 1;
}

/* Calls the function below its `narg` arguments with the traceback handler
 * and Ctrl-C armed.  Leaves results or the error object on the stack. */
static int host_docall(lua_State *L, int narg, int nres)
{
	int base = lua_gettop(L) - narg;
	lua_pushcfunction(L, msghandler);
	lua_insert(L, base);
	pmcsh_interrupted = 0;
	pmcsh_interrupt_served = 0;
	active_state = L;
	host_install_sigint();
	int status = lua_pcall(L, narg, nres, base);
	active_state = NULL;
	lua_sethook(L, NULL, 0, 0);
	lua_remove(L, base);
	return status;
}

/* Reports an error object on top of the stack; returns the exit status it
 * stands for: 2 for a usage error, 1 otherwise. */
static int host_report(lua_State *L, int status)
{
	if (status == LUA_OK)
		return 0;
	int code = 1;
	if (is_usage(L, -1)) {  /* {kind = "usage", message =, status = 2 by default} */
		lua_getfield(L, -1, "status");
		code = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : EXIT_USAGE;
		lua_pop(L, 1);
		lua_getfield(L, -1, "message");
		lua_replace(L, -2);
	}
	const char *msg = lua_tostring(L, -1);
	host_message(msg ? msg : lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, -1)));
	lua_settop(L, lua_gettop(L) - (msg ? 1 : 2));
	return code;
}

/* What the REPL (lrepl.c) uses of the host. */
static const struct repl_host repl_host = {host_docall, host_report};

/* ---- where the Lua library and recipes are ---------------------------- */

static int is_regular(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

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
	const char *home = secure ? NULL : getenv("PMCSH_HOME");
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

/* Pushes PREFIX/NAME-as-a-path.SUFFIX (pmcsh.x: PREFIX/pmcsh/x.SUFFIX). */
static const char *push_module_path(lua_State *L, const char *prefix, const char *name, const char *suffix)
{
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	luaL_addstring(&b, prefix);
	luaL_addchar(&b, '/');
	for (const char *c = name; *c; c++)
		luaL_addchar(&b, *c == '.' ? '/' : *c);
	luaL_addstring(&b, suffix);
	luaL_pushresult(&b);
	return lua_tostring(L, -1);
}

/* Loads the module's precompiled chunk (make's build/luac/lua/pmcsh/x.luac,
 * an install's luac/lua/pmcsh/x.luac; upvalue 2, nil when there is none)
 * where it is no older than the source, or always where upvalue 3 says the
 * tree is installed; pushes it and returns 1, else pushes nothing and
 * returns 0 (then the source is loaded: one that fails, say from another
 * Lua version, is never an error). */
static int load_compiled(lua_State *L, const char *name, const char *file)
{
	if (lua_isnil(L, lua_upvalueindex(2)))
		return 0;
	const char *bc = push_module_path(L, lua_tostring(L, lua_upvalueindex(2)), name, ".luac");
	struct stat sb, ss;
	int ok = stat(bc, &sb) == 0 && S_ISREG(sb.st_mode) &&
		 (lua_toboolean(L, lua_upvalueindex(3)) ||
		  (stat(file, &ss) == 0 && (sb.st_mtim.tv_sec > ss.st_mtim.tv_sec ||
					    (sb.st_mtim.tv_sec == ss.st_mtim.tv_sec && sb.st_mtim.tv_nsec >= ss.st_mtim.tv_nsec))));
	if (ok && luaL_loadfilex(L, bc, "b") == LUA_OK) {
		lua_remove(L, -2);
		return 1;
	}
	lua_pop(L, ok ? 2 : 1);
	return 0;
}

/* package.searchers[2], after the preloads: pmcsh.x is ROOT/lua/pmcsh/x.lua
 * (upvalue 1 = ROOT/lua), so package.path stays as lua sets it.  Any other
 * name gets no answer, which require leaves out of its message: "module
 * 'x' not found" then reads as lua's, byte for byte. */
static int search_pmcsh(lua_State *L)
{
	const char *name = luaL_checkstring(L, 1);
	if (strncmp(name, "pmcsh.", 6) != 0)
		return 0;
	const char *file = push_module_path(L, lua_tostring(L, lua_upvalueindex(1)), name, ".lua");
	if (!is_regular(file)) {
		lua_pushfstring(L, "no file '%s'", file);
		return 1;
	}
	if (load_compiled(L, name, file)) {
		lua_insert(L, -2);  /* the loader, then the file name as its second argument */
		return 2;
	}
	if (luaL_loadfile(L, file) != LUA_OK)
		return luaL_error(L, "error loading module '%s' from file '%s':\n\t%s", name, file, lua_tostring(L, -1));
	lua_insert(L, -2);  /* the loader, then the file name as its second argument */
	return 2;
}

/* Pushes the folder of precompiled modules, ROOT/build/luac in a built
 * tree (checked against the sources' times) or ROOT/luac in an install
 * (trusted: make install writes both), and whether it is trusted; nil,
 * false where there is none, and where this process is secure. */
static void push_compiled_dir(lua_State *L, const char *root)
{
	static const char *const dirs[] = {"build/luac", "luac"};
	for (int i = 0; i < 2 && !secure; i++) {
		char p[PATH_MAX + 16];
		struct stat st;
		snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			lua_pushfstring(L, "%s/lua", p);
			lua_pushboolean(L, i == 1);
			return;
		}
	}
	lua_pushnil(L);
	lua_pushboolean(L, 0);
}

/* Registers pmcsh.paths and the searcher for pmcsh's own modules. */
static int setup_paths(lua_State *L)
{
	char exe[PATH_MAX], root[PATH_MAX];
	if (find_root(exe, root, sizeof root) < 0) {
		host_message("cannot find the pmcsh Lua library (lua/pmcsh) beside the "
			     "binary or in ../share/pmcsh; reinstall with make install");
		return -1;
	}
	lua_getglobal(L, "package");
	lua_getfield(L, -1, "searchers");
	lua_pushfstring(L, "%s/lua", root);
	push_compiled_dir(L, root);
	lua_pushcclosure(L, search_pmcsh, 3);
	for (lua_Integer i = luaL_len(L, -2); i >= 2; i--) {  /* make room at 2 */
		lua_rawgeti(L, -2, i);
		lua_rawseti(L, -3, i + 1);
	}
	lua_rawseti(L, -2, 2);
	lua_pop(L, 1);
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
	lua_pushboolean(L, secure);
	lua_setfield(L, -2, "secure");
	lua_pushboolean(L, PMCSH_SANITIZED);
	lua_setfield(L, -2, "sanitized");
	lua_setfield(L, -2, "pmcsh.paths");
	lua_pop(L, 2);
	return 0;
}

/* ---- command line: lua.c's, option for option --------------------------- */

static void print_version(void)
{
	printf("%s\n", LUA_COPYRIGHT);
	fflush(stdout);
}

/* host_report for the recipe library: a Ctrl-C before its own handler runs
 * (while pmcsh.recipe loads, say) ends as one in a recipe does, status 130
 * without a traceback. */
static int recipe_report(lua_State *L, int status)
{
	if (status != LUA_OK && pmcsh_interrupted && !is_usage(L, -1)) {
		lua_pop(L, 1);
		host_message("interrupted");
		return 130;
	}
	return host_report(L, status);
}

/* The names every chunk sees (pmc, stream, ...), set in _G at start: the
 * exit status of a failure (130 for a Ctrl-C), else 0. */
static int setup_names(lua_State *L)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "pmcsh.names");
	return recipe_report(L, host_docall(L, 1, 0));
}

/* Calls require("pmcsh.recipe")[fn] with the strings argv[from..argc-1];
 * returns its integer result as the exit status. */
static int call_recipe_lib(lua_State *L, const char *fn, char **argv, int from, int argc)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "pmcsh.recipe");
	int status = host_docall(L, 1, 1);
	if (status != LUA_OK)
		return recipe_report(L, status);
	lua_getfield(L, -1, fn);
	lua_remove(L, -2);
	luaL_checkstack(L, argc - from + 3, "too many arguments to the recipe");
	for (int i = from; i < argc; i++)
		lua_pushstring(L, argv[i]);
	status = host_docall(L, argc - from, 1);
	if (status != LUA_OK)
		return recipe_report(L, status);
	int code = (int)lua_tointeger(L, -1);
	lua_pop(L, 1);
	return code;
}

static const char usage_text[] =
	"usage: %s [options] [script [args]]\n"
	"Available options are:\n"
	"  -e stat   execute string 'stat'\n"
	"  -i        enter interactive mode after executing 'script'\n"
	"  -l mod    require library 'mod' into global 'mod'\n"
	"  -l g=mod  require library 'mod' into global 'g'\n"
	"  -v        show version information\n"
	"  -E        ignore environment variables\n"
	"  -W        turn warnings on\n"
	"  --        stop handling options\n"
	"  -         stop handling options and execute stdin\n";

/* lua.c's answer to a bad option, on stderr (the caller exits 1). */
static void print_usage(const char *badoption)
{
	fprintf(stderr, "%s: ", progname);
	if (badoption[1] == 'e' || badoption[1] == 'l')
		fprintf(stderr, "'%s' needs argument\n", badoption);
	else
		fprintf(stderr, "unrecognized option '%s'\n", badoption);
	fprintf(stderr, usage_text, progname);
	fflush(stderr);
}

/* pmcsh -h / --help: lua's usage and pmcsh's additions on stdout, then the
 * recipes. */
static int help(lua_State *L)
{
	printf(usage_text, progname);
	printf("pmcsh adds:\n"
	       "  -h, --help  this text and the recipes\n"
	       "  --version   pmcsh's version\n"
	       "  RECIPE [--option value ...]  run a recipe (RECIPE --help: its options)\n"
	       "Globals pmc, stream, chase, machine, regions, recipe, metrics, help and show are set as pmcsh starts.\n\n");
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

static int dostring(lua_State *L, const char *s, const char *name)
{
	return host_report(L, luaL_loadbuffer(L, s, strlen(s), name) == LUA_OK ? host_docall(L, 0, 0) : LUA_ERRSYNTAX);
}

/* -l mod, -l g=mod: global = require(mod). */
static int dolibrary(lua_State *L, char *globname)
{
	char *modname = strchr(globname, '=');
	if (modname == NULL)
		modname = globname;
	else
		*modname++ = '\0';
	lua_getglobal(L, "require");
	lua_pushstring(L, modname);
	int status = host_docall(L, 1, 1);
	if (status == LUA_OK)
		lua_setglobal(L, globname);
	return host_report(L, status);
}

static int is_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* Pushes arg[1..#arg], the script's arguments, as lua.c does: from the
 * global table as -e chunks and LUA_INIT may have left it, not from argv;
 * raises "'arg' is not a table" when one replaced it.  Returns how many. */
static int push_script_args(lua_State *L)
{
	if (lua_getglobal(L, "arg") != LUA_TTABLE)
		luaL_error(L, "'arg' is not a table");
	int n = (int)luaL_len(L, -1);
	luaL_checkstack(L, n + 3, "too many arguments to script");
	int t = lua_gettop(L);
	for (int i = 1; i <= n; i++)
		lua_rawgeti(L, t, i);
	lua_remove(L, t);
	return n;
}

static int run_script(lua_State *L, char **argv, int script)
{
	const char *fname = argv[script];
	if (fname && strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
		fname = NULL; /* stdin */
	int status = luaL_loadfile(L, fname);
	if (status != LUA_OK)
		return host_report(L, status);
	status = host_docall(L, push_script_args(L), 0);
	return host_report(L, status);
}

/* LUA_INIT_5_4, else LUA_INIT: a chunk, or @file (lua.c's names). */
#define LUA_INIT_VAR "LUA_INIT"
#define LUA_INITVARVERSION LUA_INIT_VAR "_" LUA_VERSION_MAJOR "_" LUA_VERSION_MINOR
static int handle_luainit(lua_State *L)
{
	const char *name = "=" LUA_INITVARVERSION;
	const char *init = getenv(name + 1);
	if (init == NULL) {
		name = "=" LUA_INIT_VAR;
		init = getenv(name + 1);
	}
	if (init == NULL)
		return 0;
	if (init[0] == '@')
		return host_report(L, luaL_loadfile(L, init + 1) == LUA_OK ? host_docall(L, 0, 0) : LUA_ERRFILE);
	return dostring(L, init, name);
}

enum { HAS_ERROR = 1, HAS_I = 2, HAS_V = 4, HAS_E = 8, HAS_BIG_E = 16, HAS_HELP = 32, HAS_VERSION = 64 };

/* lua.c's collectargs, plus -h/--help and --version: the options before the script;
 * *first = the script's index (0: none; argc after a final "--"), or the
 * bad option's. */
static int collectargs(char **argv, int *first)
{
	int args = 0;
	for (int i = 1; argv[i] != NULL; i++) {
		*first = i;
		const char *a = argv[i];
		if (a[0] != '-')
			return args;
		switch (a[1]) {
		case '-':
			if (strcmp(a, "--help") == 0)
				return args | HAS_HELP;
			if (strcmp(a, "--version") == 0)
				return args | HAS_VERSION;
			if (a[2] != '\0')
				return HAS_ERROR;
			*first = i + 1;
			return args;
		case '\0':
			return args;
		case 'h':
			if (a[2] != '\0')
				return HAS_ERROR;
			return args | HAS_HELP;
		case 'E':
			if (a[2] != '\0')
				return HAS_ERROR;
			args |= HAS_BIG_E;
			break;
		case 'W':
			if (a[2] != '\0')
				return HAS_ERROR;
			break;
		case 'i':
			args |= HAS_I;  /* -i implies -v */
			/* fallthrough */
		case 'v':
			if (a[2] != '\0')
				return HAS_ERROR;
			args |= HAS_V;
			break;
		case 'e':
			args |= HAS_E;
			/* fallthrough */
		case 'l':
			if (a[2] == '\0') {
				i++;
				if (argv[i] == NULL || argv[i][0] == '-')
					return HAS_ERROR;
			}
			break;
		default:
			return HAS_ERROR;
		}
	}
	*first = 0;
	return args;
}

/* -e, -l and -W in order; the exit status of the first that failed, or 0. */
static int runargs(lua_State *L, char **argv, int n)
{
	for (int i = 1; i < n; i++) {
		int option = argv[i][1];
		if (option == 'e' || option == 'l') {
			char *extra = argv[i] + 2;
			if (*extra == '\0')
				extra = argv[++i];
			int code = option == 'e' ? dostring(L, extra, "=(command line)") : dolibrary(L, extra);
			if (code)
				return code;
		} else if (option == 'W') {
			lua_warning(L, "@on", 0);
		}
	}
	return 0;
}

/* Whether pmcsh.recipe finds a recipe called name (recipe.find). */
static int recipe_exists(lua_State *L, const char *name)
{
	lua_getglobal(L, "require");
	lua_pushliteral(L, "pmcsh.recipe");
	if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
		lua_pop(L, 1);
		return 0;
	}
	lua_getfield(L, -1, "find");
	lua_pushstring(L, name);
	int found = lua_pcall(L, 1, 1, 0) == LUA_OK && lua_toboolean(L, -1);
	lua_pop(L, 2);
	return found;
}

/* A first argument that names no path, no option and no .lua is a recipe
 * whenever a recipe of that name exists, as git's subcommands are and as a
 * PATH without "." finds commands: a file of that name in the current
 * folder (anyone's) runs only as ./NAME, and pmcsh says so.  A bare name
 * that is no recipe but a file runs as lua runs it; one that is neither
 * goes to the recipe host, which says so. */
static int is_recipe_name(lua_State *L, const char *a)
{
	if (a[0] == '-' || strchr(a, '/') || strstr(a, ".lua"))
		return 0;
	if (!is_file(a))
		return 1;
	if (!recipe_exists(L, a))
		return 0;
	fprintf(stderr, "%s: running the recipe %s; the file '%s' in this folder runs as ./%s\n",
		progname, a, a, a);
	return 1;
}

/* The REPL, whose messages, as lua.c's in interactive mode, name no
 * program: an error that ends it (a _PROMPT whose __tostring fails) too. */
static int run_repl(lua_State *L)
{
	in_repl = 1;
	int code = repl_run(L, &repl_host);
	in_repl = 0;
	return code;
}

/* The whole program, run protected: returns the exit status. */
static int pmain(lua_State *L)
{
	int argc = (int)lua_tointeger(L, 1);
	char **argv = (char **)lua_touserdata(L, 2);
	lua_settop(L, 0);
	int script = 0;
	int args = collectargs(argv, &script);
	int optlim = script > 0 ? script : argc;
	if (args == HAS_ERROR) {
		print_usage(argv[script]);
		lua_pushinteger(L, 1);
		return 1;
	}
	if (args & HAS_VERSION) {
		printf("pmcsh %s (%s)\n", PMCSH_VERSION, LUA_RELEASE);
		lua_pushinteger(L, 0);
		return 1;
	}
	if (args & HAS_V)
		print_version();
	if (secure)
		args |= HAS_BIG_E;  /* as -E: no LUA_INIT, LUA_PATH or LUA_CPATH */
	if (args & HAS_BIG_E) {  /* the package library then ignores LUA_PATH/LUA_CPATH */
		lua_pushboolean(L, 1);
		lua_setfield(L, LUA_REGISTRYINDEX, "LUA_NOENV");
	}
	luaL_openlibs(L);
	pmcsh_preload(L);
	int status = setup_paths(L) < 0 ? 1 : setup_names(L);
	if (status) {
		lua_pushinteger(L, status);
		return 1;
	}
	host_install_sigint();
	if (args & HAS_HELP) {
		lua_pushinteger(L, help(L));
		return 1;
	}
	/* pmcsh NAME ...: a recipe parses its own options. */
	if (script > 0 && script < argc && strcmp(argv[script - 1], "--") != 0 && is_recipe_name(L, argv[script])) {
		lua_pushinteger(L, call_recipe_lib(L, "main", argv, script, argc));
		return 1;
	}
	create_arg_table(L, argv, argc, script);
	lua_gc(L, LUA_GCGEN, 0, 0);
	if (!(args & HAS_BIG_E) && handle_luainit(L)) {
		lua_pushinteger(L, 1);
		return 1;
	}
	int code = runargs(L, argv, optlim);
	if (code == 0 && script > 0)
		code = run_script(L, argv, script);
	if (code == 0) {
		if (args & HAS_I) {
			code = run_repl(L);
		} else if (script < 1 && !(args & (HAS_E | HAS_V))) {
			if (isatty(STDIN_FILENO)) {
				print_version();
				code = run_repl(L);
			} else {
				code = host_report(L, luaL_loadfile(L, NULL) == LUA_OK ? host_docall(L, 0, 0) : LUA_ERRFILE);
			}
		}
	}
	lua_pushinteger(L, code);
	return 1;
}

/* A standard stream closed when pmcsh starts (pmcsh ... >&-) is held by
 * /dev/null opened the wrong way round (0 write-only, 1 and 2 read-only,
 * close-on-exec): no file pmcsh opens takes its number, a command it runs
 * finds it closed, and every use fails as on a closed one (EBADF), so
 * close_std reports a write, not the close of a stream never used. */
static void hold_closed_std(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int got = open("/dev/null", (fd == 0 ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
			if (got >= 0 && got != fd)
				close(got);  /* not the lowest free number: leave it closed */
		}
}

/* Results must not be lost unnoticed: a failed write to stdout or stderr
 * (a full disk, /dev/full, a closed pipe) turns a success into status 1,
 * said on stderr when stderr still works. */
static int close_std(int code)
{
	/* errno is the failure's only where this flush or close fails: an
	 * earlier write's (ferror) is long overwritten; the descriptor is asked
	 * again with an empty write (a closed one says EBADF, /dev/full ENOSPC),
	 * else the failure is not named */
	errno = 0;
	int out_err = fflush(stdout) != 0 ? errno : 0;
	int out_bad = out_err != 0 || ferror(stdout);
	if (out_bad && !out_err) {
		errno = 0;
		if (write(fileno(stdout), "", 0) < 0)
			out_err = errno;
	}
	if (fclose(stdout) != 0 && !out_bad) {
		out_bad = 1;
		out_err = errno;
	}
	if (out_bad && out_err != EPIPE) {
		fprintf(stderr, "%s: error writing standard output: %s\n", progname,
			out_err ? strerror(out_err) : "a write failed (a full disk, or a closed output?)");
		if (code == 0)
			code = 1;
	}
	if ((fflush(stderr) != 0 || ferror(stderr)) && code == 0)
		code = 1;
	return code;
}

int main(int argc, char **argv)
{
	hold_closed_std();
	if (argv[0] && argv[0][0])
		progname = argv[0];
	if (getuid() != geteuid() || getgid() != getegid()) {
		fprintf(stderr, "%s: refusing to run setuid or setgid (a script could do anything as the file's owner); "
			"grant counting with capabilities instead (setcap cap_perfmon+ep) or lower "
			"kernel.perf_event_paranoid\n", progname);
		return 1;
	}
	if (argc > 1 && !strcmp(argv[1], PMC_FORCED_ARG))
		return pmc_forced_child(argc, argv);  /* another CPU model's events, for the parent */
	secure = getauxval(AT_SECURE) != 0;
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
	pmcsh_closing();
	lua_close(L);
	return close_std(code);
}
