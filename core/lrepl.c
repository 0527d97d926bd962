/* The interactive loop: readline with persistent history, multi-line input,
 * results printed by lua/pmcsh/repl.lua, completion asked of that module,
 * and Ctrl-C that abandons the line at the prompt or stops running code. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <readline/readline.h>
#include <readline/history.h>

#include <lua.h>
#include <lauxlib.h>

#include "lrepl.h"
#include "../kernels/interrupt.h"

#define HISTORY_MAX 1000
#define PROMPT "> "	/* unless _PROMPT says otherwise, as in lua.c */
#define PROMPT2 ">> "	/* _PROMPT2 */
#define EOFMARK "<eof>"

static lua_State *repl_L;
static const struct repl_host *host;	/* how the host runs and reports */
static int repl_ref = LUA_NOREF;	/* the pmcsh.repl module table */
static int line_cancelled;
static char history_path[4096];

/* Ctrl-C while readline waits: SIGINT is blocked while readline runs and
 * unblocked only inside ppoll, so the flag is never missed; the line (and
 * any unfinished statement) is dropped by accepting it empty, marked
 * cancelled. */
static sigset_t wait_mask;

static int repl_getc(FILE *in)
{
	struct pollfd pfd = {.fd = fileno(in), .events = POLLIN};
	unsigned char c;
	for (;;) {
		if (pmcsh_interrupted) {
			pmcsh_interrupted = 0;
			line_cancelled = 1;
			rl_replace_line("", 0);
			return '\n';
		}
		if (ppoll(&pfd, 1, NULL, &wait_mask) < 0) {
			if (errno == EINTR)
				continue;
			return EOF;
		}
		ssize_t n = read(pfd.fd, &c, 1);
		if (n == 1)
			return c;
		if (n == 0 || errno != EINTR)
			return EOF;
	}
}

/* Reads one line; NULL at end of input.  Sets *cancelled on Ctrl-C. */
static char *read_line(const char *prompt, int *cancelled)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	line_cancelled = 0;
	pmcsh_interrupted = 0;
	sigprocmask(SIG_BLOCK, &block, &wait_mask);
	char *line = readline(prompt);
	sigprocmask(SIG_SETMASK, &wait_mask, NULL);
	*cancelled = line_cancelled;
	return line;
}

/* lua.c's prompt: tostring(_PROMPT) (_PROMPT2 for a continuation line),
 * the default when that global is nil.  The string stays on the stack, the
 * caller pops it after reading; a failing __tostring raises, as in lua.c. */
static const char *push_prompt(lua_State *L, int firstline)
{
	if (lua_getglobal(L, firstline ? "_PROMPT" : "_PROMPT2") == LUA_TNIL) {
		lua_pop(L, 1);
		lua_pushstring(L, firstline ? PROMPT : PROMPT2);
	} else {
		luaL_tolstring(L, -1, NULL);
		lua_remove(L, -2);
	}
	return lua_tostring(L, -1);
}

/* Reads one line with the prompt lua.c would show; see read_line. */
static char *prompt_line(lua_State *L, int firstline, int *cancelled)
{
	char *line = read_line(push_prompt(L, firstline), cancelled);
	lua_pop(L, 1);
	return line;
}

/* Pushes repl[name] (a function) on the stack. */
static void push_repl_fn(lua_State *L, const char *name)
{
	lua_rawgeti(L, LUA_REGISTRYINDEX, repl_ref);
	lua_getfield(L, -1, name);
	lua_remove(L, -2);
}

/* ---- completion -------------------------------------------------------- */

static char **matches;
static int nmatches, next_match;

static void free_matches(void)
{
	for (int i = next_match; i < nmatches; i++)
		free(matches[i]);
	free(matches);
	matches = NULL;
	nmatches = next_match = 0;
}

static char *match_generator(const char *text, int state)
{
	(void)text;
	(void)state;
	return next_match < nmatches ? matches[next_match++] : NULL;
}

/* Asks repl.complete(line_before_cursor, word) for candidates. */
static char **attempt_completion(const char *text, int start, int end)
{
	(void)end;
	lua_State *L = repl_L;
	rl_attempted_completion_over = 1;
	free_matches();
	int top = lua_gettop(L);
	push_repl_fn(L, "complete");
	lua_pushlstring(L, rl_line_buffer, (size_t)rl_point);
	lua_pushstring(L, text);
	lua_pushinteger(L, start);
	if (lua_pcall(L, 3, 1, 0) == LUA_OK && lua_istable(L, -1)) {
		int n = (int)luaL_len(L, -1);
		matches = calloc((size_t)n + 1, sizeof *matches);
		for (int i = 1; matches && i <= n; i++) {
			lua_rawgeti(L, -1, i);
			const char *s = lua_tostring(L, -1);
			if (s)
				matches[nmatches++] = strdup(s);
			lua_pop(L, 1);
		}
	}
	lua_settop(L, top);
	if (nmatches == 0)
		return NULL;
	rl_completion_append_character = '\0';
	rl_completion_suppress_quote = 1;
	return rl_completion_matches(text, match_generator);
}

/* Inside an open string only quotes break words, so event names such as
 * "msr/tsc/" or "page-faults:u" complete whole. */
static char *word_break_hook(void)
{
	static char code_breaks[] = " \t\n\"\\'`@$><=;|&{(,+-*/%^~#[]";
	static char string_breaks[] = "\"'";
	char quote = 0;
	for (int i = 0; i < rl_point; i++) {
		char c = rl_line_buffer[i];
		if (quote) {
			if (c == '\\')
				i++;
			else if (c == quote)
				quote = 0;
		} else if (c == '"' || c == '\'') {
			quote = c;
		}
	}
	return quote ? string_breaks : code_breaks;
}

/* ---- reading a statement ---------------------------------------------- */

static int incomplete(lua_State *L, int status)
{
	if (status == LUA_ERRSYNTAX) {
		size_t lmsg;
		const char *msg = lua_tolstring(L, -1, &lmsg);
		size_t lmark = sizeof(EOFMARK) - 1;
		if (lmsg >= lmark && strcmp(msg + lmsg - lmark, EOFMARK) == 0)
			return 1;
	}
	return 0;
}

/* With the source below its loaded chunk on the stack: when repl.checked
 * rewrites the statement (an assignment from a call that may fail, so its
 * nil, msg is shown where it happens) and the rewrite loads, the rewrite
 * replaces the chunk. */
static void checked_assignment(lua_State *L)
{
	int top = lua_gettop(L);
	push_repl_fn(L, "rewrite");
	lua_pushvalue(L, -3);
	if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
		const char *src = lua_tostring(L, -1);
		if (luaL_loadbuffer(L, src, strlen(src), "=stdin") == LUA_OK) {
			lua_replace(L, top);
		}
	}
	lua_settop(L, top);
}

/* Reads a statement and loads it (as an expression first), reading
 * continuation lines while it is incomplete.  Returns the load status with
 * the chunk or error on top (end of input inside a statement: its syntax
 * error), -1 at end of input, -2 when Ctrl-C dropped it. */
static int load_statement(lua_State *L)
{
	int cancelled;
	char *line = prompt_line(L, 1, &cancelled);
	if (line == NULL)
		return -1;
	if (cancelled) {
		free(line);
		return -2;
	}
	luaL_Buffer b;
	if (line[0] == '=')  /* lua.c's "=x", 5.2's "return x" */
		lua_pushfstring(L, "return %s", line + 1);
	else
		lua_pushstring(L, line);
	free(line);
	const char *src = lua_tostring(L, -1);
	const char *retsrc = lua_pushfstring(L, "return %s;", src);
	int status = luaL_loadbuffer(L, retsrc, strlen(retsrc), "=stdin");
	if (status == LUA_OK) {
		lua_remove(L, -2); /* the "return" text */
		goto done;
	}
	lua_pop(L, 2);
	for (;;) {
		src = lua_tostring(L, -1);
		status = luaL_loadbuffer(L, src, strlen(src), "=stdin");
		if (!incomplete(L, status)) {
			if (status == LUA_OK)
				checked_assignment(L);
			break;
		}
		char *more = prompt_line(L, 0, &cancelled);
		if (more == NULL)  /* end of input: the syntax error is the statement's */
			break;
		lua_pop(L, 1);  /* the "<eof>" message */
		if (cancelled) {
			free(more);
			lua_pop(L, 1);
			return -2;
		}
		luaL_buffinit(L, &b);
		lua_pushvalue(L, -2);
		luaL_addvalue(&b);
		luaL_addchar(&b, '\n');
		luaL_addstring(&b, more);
		free(more);
		luaL_pushresult(&b);
		lua_remove(L, -2);
	}
done:
	/* stack: source, chunk-or-error */
	src = lua_tostring(L, -2);
	if (src && *src) {
		add_history(src);
		if (history_path[0]) {
			append_history(1, history_path);
			history_truncate_file(history_path, HISTORY_MAX);
		}
	}
	lua_remove(L, -2);
	return status;
}

/* ~/.pmcsh_history, private (0600), kept only for a person at a terminal. */
static void history_setup(void)
{
	const char *home = getenv("HOME");
	history_path[0] = '\0';
	/* a statement of several lines is one entry, in the file too: each entry
	 * is written after a "#time" line, and readline reads a file that starts
	 * so with the lines up to the next "#time" as one entry */
	history_comment_char = '#';
	history_write_timestamps = 1;
	if (home && *home && isatty(STDIN_FILENO)) {
		snprintf(history_path, sizeof history_path, "%s/.pmcsh_history", home);
		int fd = open(history_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);  /* so append works */
		if (fd >= 0)
			close(fd);
		read_history(history_path);
	}
	stifle_history(HISTORY_MAX);
}

/* Prints an error from a REPL statement (message and traceback). */
static void report_error(lua_State *L)
{
	if (lua_type(L, -1) == LUA_TTABLE)
		lua_getfield(L, -1, "message");
	const char *msg = lua_tostring(L, -1);
	fprintf(stderr, "%s\n", msg ? msg : "(error object is not a string)");
	fflush(stderr);
	lua_settop(L, 0);
}

/* lua.c's l_print: the n values on the stack (repl.show's text of each
 * result at a terminal, the values themselves otherwise) passed to the global print, whatever it is now; a print that
 * fails is reported as lua reports it in interactive mode (no prefix). */
static void print_results(lua_State *L, int n)
{
	luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
	lua_getglobal(L, "print");
	lua_insert(L, 1);
	if (lua_pcall(L, n, 0, 0) != LUA_OK) {
		lua_pushfstring(L, "error calling 'print' (%s)", lua_tostring(L, -1));
		report_error(L);
	}
}

/* Runs the REPL until end of input; returns the exit status (0). */
int repl_run(lua_State *L, const struct repl_host *h)
{
	repl_L = L;
	host = h;
	lua_getglobal(L, "require");
	lua_pushliteral(L, "pmcsh.repl");
	if (host->docall(L, 1, 1) != LUA_OK)
		return host->report(L, LUA_ERRRUN);
	repl_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	/* a person at a terminal gets pmcsh's line under lua's version and
	 * results formatted by repl.show; input from elsewhere sees what lua
	 * prints (a string as itself, a table as "table: 0x..."), and no more */
	int person = isatty(STDIN_FILENO);
	if (person) {
		push_repl_fn(L, "banner");
		if (host->docall(L, 0, 0) != LUA_OK)
			report_error(L);
	}

	rl_readline_name = "pmcsh";
	rl_attempted_completion_function = attempt_completion;
	rl_completion_word_break_hook = word_break_hook;
	rl_getc_function = repl_getc;
	rl_catch_signals = 0;	/* our SIGINT handler stays; repl_getc sees it */
	history_setup();

	lua_settop(L, 0);
	int status;
	while ((status = load_statement(L)) != -1) {
		if (status == -2)
			continue;
		if (status == LUA_OK)
			status = host->docall(L, 0, LUA_MULTRET);
		if (status == LUA_OK) {
			int n = lua_gettop(L);
			if (n > 0 && !person) {
				print_results(L, n);
			} else if (n > 0) {
				push_repl_fn(L, "show");
				lua_insert(L, 1);
				if (host->docall(L, n, n) == LUA_OK)
					print_results(L, n);
				else
					report_error(L);
			}
		} else {
			report_error(L);
		}
		lua_settop(L, 0);
		fflush(stdout);
	}
	fputc('\n', stdout);
	fflush(stdout);
	free_matches();
	return 0;
}
