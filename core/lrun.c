/* pmcsh._run: a command counted from its exec, or targets counted while
 * it runs (perf stat; pmc.run).  Converts the arguments and the results;
 * the process protocol is child.c, the groups lpmc.c (lgroup.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "lgroup.h"
#include "child.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Pushes the cumulative readings of l_run: the child's group (gtab == 0),
 * or the list of the targets' groups in the table at gtab.  Returns 1, or
 * what pmcsh_fail pushed (3). */
static int run_readings(lua_State *L, int gtab, struct lgroup *child)
{
	if (!gtab)
		return lpmc_read_push(L, child, 0);
	int n = (int)lua_rawlen(L, gtab);
	lua_createtable(L, n, 0);
	for (int i = 1; i <= n; i++) {
		lua_rawgeti(L, gtab, i);
		struct lgroup *lg = lua_touserdata(L, -1);
		lua_pop(L, 1);
		if (!lg) {  /* a thread gone before it was opened (missing_ok): false */
			lua_pushboolean(L, 0);
			lua_rawseti(L, -2, i);
			continue;
		}
		int r = lpmc_read_push(L, lg, 0);
		if (r != 1)
			return r;
		lua_rawseti(L, -2, i);
	}
	return 1;
}

/* pmc_child_wait's tick for l_run: on_interval(reading(s), seconds); an
 * error in it stops the count and is raised once the command is gone (its
 * message left on the stack). */
struct run_tick {
	lua_State *L;
	int cb, gtab;
	struct lgroup *lg;
	int failed;
};

static int run_tick(void *ctx, double seconds)
{
	struct run_tick *t = ctx;
	lua_State *L = t->L;
	lua_pushvalue(L, t->cb);
	if (run_readings(L, t->gtab, t->lg) != 1) {
		lua_pop(L, 4);  /* a failed read (nil, msg, errno): no tick */
		return 0;
	}
	lua_pushnumber(L, seconds);
	if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
		t->failed = 1;
		return 1;
	}
	return 0;
}

/* pmc.run's arguments: the events (1), the command words (2) as a
 * NULL-terminated argv in a userdata left on the stack, and the options (3). */
struct run_args {
	int n, argc;
	const char **argv;
	lua_Integer interval_ms, interval_count, until_pid;
	int cb, gtab;  /* stack indices of on_interval and targets; 0: none */
	int missing_ok;  /* a {pid=} target gone before it is opened is left out */
	int inherit;     /* the command's threads and children are counted (perf stat without -i) */
	lua_Integer delay_ms;  /* perf stat -D: > 0 ms after the exec, -1 at `enable`, 0 at the exec */
	int control;     /* stack index of {ctl=, ack=}; 0: none */
	int on_start;    /* stack index of opts.on_start, called once all is open, before the exec; 0: none */
	char **envp;     /* the command's environment (opts.env over pmcsh's), NULL: pmcsh's */
};

/* The command's environment: pmcsh's with the table at idx's NAME=value
 * pairs added or put in place of the same NAME's.  The strings live in a
 * table left on the stack; envp in a userdata pushed after it. */
static char **run_env(lua_State *L, int idx)
{
	size_t n = 0;
	for (char **e = environ; *e; e++)
		n++;
	lua_newtable(L);
	int keep = lua_gettop(L);
	size_t extra = 0;
	lua_pushnil(L);
	while (lua_next(L, idx)) {
		size_t kl = 0, vl;
		const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &kl) : NULL;
		int is_value = lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER;
		pmcsh_argcheck(L, k && is_value, 3, "env: a table of NAME = value strings");
		pmcsh_argcheck(L, kl > 0 && strlen(k) == kl && !strchr(k, '='), 3,
			       "env: a name is not empty and holds no '=' and no NUL");
		const char *v = lua_tolstring(L, -1, &vl);  /* a number as its string */
		pmcsh_argcheck(L, strlen(v) == vl, 3, "env: a value holds no NUL");
		lua_pushfstring(L, "%s=%s", k, v);
		lua_rawseti(L, keep, (lua_Integer)++extra);
		lua_pop(L, 1);
	}
	char **envp = lua_newuserdatauv(L, sizeof(char *) * (n + extra + 1), 0);
	size_t m = 0;
	for (char **e = environ; *e; e++) {
		size_t nl = strcspn(*e, "=");
		int replaced = 0;
		for (size_t i = 1; i <= extra && !replaced; i++) {
			lua_rawgeti(L, keep, (lua_Integer)i);
			const char *kv = lua_tostring(L, -1);
			replaced = !strncmp(kv, *e, nl) && kv[nl] == '=';
			lua_pop(L, 1);
		}
		if (!replaced)
			envp[m++] = *e;
	}
	for (size_t i = 1; i <= extra; i++) {
		lua_rawgeti(L, keep, (lua_Integer)i);
		envp[m++] = (char *)lua_tostring(L, -1);  /* anchored in keep */
		lua_pop(L, 1);
	}
	envp[m] = NULL;
	return envp;
}

static void run_args(lua_State *L, struct run_args *a)
{
	a->n = lpmc_list_len(L, 1, "events");
	if (!lua_isnoneornil(L, 2)) {
		pmcsh_checktype(L, 2, LUA_TTABLE);
		a->argc = (int)luaL_len(L, 2);
	}
	if (!lua_isnoneornil(L, 3)) {
		pmcsh_checktype(L, 3, LUA_TTABLE);
		static const char *const known[] = {"targets", "interval_ms", "on_interval", "until_pid", "missing_ok",
						    "inherit", "delay_ms", "control", "env", "interval_count", "on_start", NULL};
		pmcsh_checkkeys(L, 3, 3, known);
		if (lua_getfield(L, 3, "inherit") != LUA_TNIL)
			a->inherit = lua_toboolean(L, -1);
		lua_pop(L, 1);
		lua_getfield(L, 3, "missing_ok");
		a->missing_ok = lua_toboolean(L, -1);
		lua_pop(L, 1);
		lua_getfield(L, 3, "interval_ms");
		a->interval_ms = pmcsh_optinteger(L, -1, 0);
		pmcsh_argcheck(L, a->interval_ms >= 0, 3, "interval_ms must be >= 0");
		lua_getfield(L, 3, "interval_count");
		a->interval_count = pmcsh_optinteger(L, -1, 0);
		pmcsh_argcheck(L, a->interval_count >= 0, 3, "interval_count must be >= 0");
		lua_pop(L, 1);
		lua_getfield(L, 3, "until_pid");
		a->until_pid = pmcsh_optinteger(L, -1, 0);
		lua_pop(L, 2);
		if (lua_getfield(L, 3, "on_interval") != LUA_TNIL) {
			pmcsh_argexpected(L, lua_isfunction(L, -1), 3, "on_interval as a function");
			a->cb = lua_gettop(L);
		} else
			lua_pop(L, 1);
		lua_getfield(L, 3, "delay_ms");
		a->delay_ms = pmcsh_optinteger(L, -1, 0);
		pmcsh_argcheck(L, a->delay_ms >= -1 && a->delay_ms <= 0x7fffffff, 3, "delay_ms: -1, 0 or a number of ms");
		lua_pop(L, 1);
		if (lua_getfield(L, 3, "control") != LUA_TNIL) {
			pmcsh_argexpected(L, lua_istable(L, -1), 3, "control as {ctl = FIFO path or fd[, ack = ...]}");
			a->control = lua_gettop(L);
		} else
			lua_pop(L, 1);
		if (lua_getfield(L, 3, "on_start") != LUA_TNIL) {
			pmcsh_argexpected(L, lua_isfunction(L, -1), 3, "on_start as a function");
			a->on_start = lua_gettop(L);
		} else
			lua_pop(L, 1);
		if (lua_getfield(L, 3, "env") != LUA_TNIL) {
			pmcsh_argexpected(L, lua_istable(L, -1), 3, "env as a table {NAME = value, ...}");
			a->envp = run_env(L, lua_gettop(L));
		} else
			lua_pop(L, 1);
		if (lua_getfield(L, 3, "targets") != LUA_TNIL) {
			pmcsh_argexpected(L, lua_istable(L, -1), 3, "targets as a list of {pid=} or {cpus=} tables");
			pmcsh_argcheck(L, luaL_len(L, -1) >= 1, 3, "targets: give at least one");
			a->gtab = lua_gettop(L);
		} else
			lua_pop(L, 1);
	}
	pmcsh_argcheck(L, a->argc >= 1 || a->gtab, 2, "empty command");
	a->argv = lua_newuserdatauv(L, sizeof(char *) * (size_t)(a->argc + 1), 0);
	for (int i = 0; i < a->argc; i++) {
		lua_geti(L, 2, i + 1);
		pmcsh_argcheck(L, lua_type(L, -1) == LUA_TSTRING, 2, "command words must be strings");
		size_t len;
		a->argv[i] = lua_tolstring(L, -1, &len);
		if (strlen(a->argv[i]) != len)  /* exec would take it cut at the NUL */
			pmcsh_argerror(L, 2, lua_pushfstring(L, "command word %d holds a NUL byte", i + 1));
		lua_pop(L, 1);  /* still referenced by the table */
	}
	a->argv[a->argc] = NULL;
}

/* Opens one group per target of the list at a->gtab, disabled, into a new
 * list pushed in its place (a->gtab then points to it); with missing_ok, a
 * thread that no longer exists (ESRCH) is false there, as perf stat -a
 * --per-thread drops a thread that ended since it listed them.  Returns 0,
 * or -errno with msg. */
static int open_targets(lua_State *L, struct run_args *a, char *msg)
{
	int nt = (int)luaL_len(L, a->gtab);
	lua_createtable(L, nt, 0);
	int list = lua_gettop(L);
	for (int i = 1; i <= nt; i++) {
		struct pmc_target t;
		lua_rawgeti(L, a->gtab, i);
		lpmc_read_target(L, lua_gettop(L), &t);
		lua_pop(L, 1);
		struct lgroup *g = lpmc_newgroup(L, a->n);
		int r = lpmc_resolve_list(L, 1, g->ev, a->n, msg);
		if (!r) {
			pmc_group_layout(&g->g);
			r = lpmc_group_open(L, g, &t, msg);
		}
		if (r == -ESRCH && a->missing_ok && t.pid > 0) {
			lua_pop(L, 1);
			lua_pushboolean(L, 0);
			r = 0;
		}
		if (r)
			return r;
		lua_rawseti(L, list, i);
	}
	a->gtab = list;
	return 0;
}

/* Enables (on) or disables the targets' groups, in the list at gtab. */
static void enable_targets(lua_State *L, int gtab, int on)
{
	for (int i = 1; i <= (int)lua_rawlen(L, gtab); i++) {
		lua_rawgeti(L, gtab, i);
		struct lgroup *lg = lua_touserdata(L, -1);
		if (lg && on)
			pmc_group_start(&lg->g);
		else if (lg)
			pmc_group_disable(&lg->g);
		lua_pop(L, 1);
	}
}

/* The counters a control command switches: the child's group, or the
 * targets' (NULL: a thread gone before it was opened). */
struct run_switch {
	struct pmc_group **g;
	int n;
	struct pmc_group *one;  /* the child's: g points here */
};

static int run_switch(void *ctx, int on)
{
	struct run_switch *s = ctx;
	for (int i = 0; i < s->n; i++)
		if (s->g[i] && on)
			pmc_group_enable(s->g[i]);  /* no rebase: the counts go on from where they stopped */
		else if (s->g[i])
			pmc_group_disable(s->g[i]);
	return 0;
}

/* One end of opts.control (field k of the table at idx): a FIFO path,
 * opened here and closed by pmc_control_close, or an inherited fd, into
 * *fd (-1 when the field is absent).  Returns 0, or -errno with msg (an
 * errno apart from the fd: -EPERM is -1). */
static int control_end(lua_State *L, int idx, const char *k, struct pmc_control *c, int *fd, char *msg, size_t len)
{
	int t = lua_getfield(L, idx, k);
	int r = 0;
	*fd = -1;
	if (t == LUA_TSTRING) {
		size_t l;
		const char *path = lua_tolstring(L, -1, &l);
		pmcsh_argcheck(L, strlen(path) == l && l > 0, 3, "control: a FIFO path is not empty and holds no NUL");
		r = pmc_control_fifo(path, msg, len);
		if (r >= 0) {
			*fd = r;
			r = 0;
			c->owned |= !strcmp(k, "ctl") ? 1 : 2;
		}
	} else if (t != LUA_TNIL) {
		*fd = (int)lua_tointeger(L, -1);  /* in range: control_open checked it */
		r = pmc_control_fd(*fd, msg, len);
	}
	lua_pop(L, 1);
	return r;
}

/* Opens opts.control's channel into c: 0, or -errno with msg (c closed).
 * Its fields are checked before anything is opened: a misuse raises with
 * no fd left open. */
static int control_open(lua_State *L, int idx, struct pmc_control *c, char *msg, size_t len)
{
	static const char *const known[] = {"ctl", "ack", NULL};
	pmcsh_checkkeys(L, idx, 3, known);
	for (int i = 0; known[i]; i++) {
		int t = lua_getfield(L, idx, known[i]);
		pmcsh_argcheck(L, t != LUA_TNIL || i > 0, 3, "control: ctl (a FIFO path or an fd) is missing");
		if (t == LUA_TNUMBER && !(lua_isinteger(L, -1) && lua_tointeger(L, -1) >= 0 &&
					  lua_tointeger(L, -1) <= 0x7fffffff))
			pmcsh_argerror(L, 3, lua_isinteger(L, -1)
				? lua_pushfstring(L, "control: %s: fd %I out of range (0..2147483647)", known[i],
						  lua_tointeger(L, -1))
				: lua_pushfstring(L, "control: %s: fd %f out of range (0..2147483647)", known[i],
						  lua_tonumber(L, -1)));
		if (t != LUA_TNIL && t != LUA_TNUMBER && t != LUA_TSTRING)
			pmcsh_argerror(L, 3, lua_pushfstring(L, "control: %s: a FIFO path or an fd expected, got %s",
							     known[i], luaL_typename(L, -1)));
		lua_pop(L, 1);
	}
	int r = control_end(L, idx, "ctl", c, &c->ctl, msg, len);
	if (!r)
		r = control_end(L, idx, "ack", c, &c->ack, msg, len);
	if (r)
		pmc_control_close(c);
	return r;
}

/* Pushes a list of what the control commands did, in order ("enabled",
 * "disabled", "malformed", "named"), as info.control_log. */
static void push_control_log(lua_State *L, const struct pmc_control *c)
{
	lua_createtable(L, (int)c->nlog, 0);
	for (size_t i = 0; i < c->nlog; i++) {
		const char *w = c->log[i] == 'E' ? "enabled" : c->log[i] == 'D' ? "disabled"
			      : c->log[i] == 'W' ? "malformed" : "named";
		lua_pushstring(L, w);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	lua_setfield(L, -2, "control_log");
	if (c->dropped)
		pmcsh_setint(L, "control_log_dropped", (lua_Integer)c->dropped);
}

/* Pushes {status=, signal=, elapsed=, user=, sys=, stopped_by=?}. */
static void push_status(lua_State *L, const struct pmc_child_status *st)
{
	lua_createtable(L, 0, 6);
	if (st->exit_code >= 0)
		pmcsh_setint(L, "status", st->exit_code);
	if (st->term_signal)
		pmcsh_setint(L, "signal", st->term_signal);
	pmcsh_setnum(L, "elapsed", st->elapsed_ns / 1e9);
	/* the command's CPU time, its waited-for children included (perf's
	 * "seconds user" / "seconds sys") */
	pmcsh_setnum(L, "user", st->ru.ru_utime.tv_sec + st->ru.ru_utime.tv_usec / 1e6);
	pmcsh_setnum(L, "sys", st->ru.ru_stime.tv_sec + st->ru.ru_stime.tv_usec / 1e6);
	if (st->forwarded)
		pmcsh_setint(L, "stopped_by", st->forwarded);
}

/* The groups l_run counts: the targets' (opened now, their list left at
 * a->gtab), or the child's, *lg (resolved and laid out now, opened once
 * the child exists).  Returns 0, or -errno with msg. */
static int run_groups(lua_State *L, struct run_args *a, struct lgroup **lg, char *msg)
{
	if (a->gtab)
		return open_targets(L, a, msg);
	*lg = lpmc_newgroup(L, a->n);
	int r = lpmc_resolve_list(L, 1, (*lg)->ev, a->n, msg);
	if (!r)
		pmc_group_layout(&(*lg)->g);
	return r;
}

/* What a control command switches (sw): the child's group, or the
 * targets', listed in a userdata left on the stack. */
static void run_switch_of(lua_State *L, const struct run_args *a, struct lgroup *lg, struct run_switch *sw)
{
	if (!a->gtab) {
		sw->one = lg ? &lg->g : NULL;
		sw->g = &sw->one;
		sw->n = 1;
		return;
	}
	sw->n = (int)lua_rawlen(L, a->gtab);
	sw->g = lua_newuserdatauv(L, sizeof(struct pmc_group *) * (size_t)sw->n, 0);
	for (int i = 0; i < sw->n; i++) {
		lua_rawgeti(L, a->gtab, i + 1);
		struct lgroup *tg = lua_touserdata(L, -1);
		sw->g[i] = tg ? &tg->g : NULL;
		lua_pop(L, 1);
	}
}

/* Starts the command, where there is one, and its counting: the child's
 * group opened on it (counting it and its children from its exec, or from
 * the delay's end), or the targets enabled (unless delayed).  Returns 0,
 * or -errno with msg (PMC_ERR_MAX), the child abandoned. */
static int run_start(lua_State *L, const struct run_args *a, struct lgroup *lg, struct pmc_child *child, char *msg)
{
	int r;
	if (a->argc && (r = pmc_child_spawn(child, (char *const *)a->argv, a->envp, msg, PMC_ERR_MAX)))
		return r;
	if (lg) {
		struct pmc_target t = {.pid = child->pid, .inherit = a->inherit, .enable_on_exec = a->delay_ms == 0};
		if ((r = lpmc_group_open(L, lg, &t, msg))) {
			pmc_child_abandon(child);
			return r;
		}
	} else if (a->delay_ms == 0)
		enable_targets(L, a->gtab, 1);
	return 0;
}

/* After the wait (st): pushes the readings and the status table, with the
 * control channel's log where there is one (ctl), and returns 2; or nil,
 * msg, errno and the shell's status for a command that could not run
 * (126, 127), 4; or a failed read's nil, msg, errno, 3. */
static int run_results(lua_State *L, const struct run_args *a, struct lgroup *lg,
		       const struct pmc_child_status *st, const struct pmc_control *ctl)
{
	if (st->exec_errno) {
		char msg[PMC_ERR_MAX];
		snprintf(msg, sizeof msg, "cannot run '%s': %s", a->argv[0], strerror(st->exec_errno));
		pmcsh_fail(L, msg, st->exec_errno);
		lua_pushinteger(L, st->exit_code);
		return 4;
	}
	if (a->gtab)
		enable_targets(L, a->gtab, 0);
	int nres = run_readings(L, a->gtab, lg);  /* baseline is zero: counts since exec */
	if (lg)
		lpmc_close(lg);
	if (nres != 1)
		return nres;
	push_status(L, st);
	if (ctl)
		push_control_log(L, ctl);
	return 2;
}

/* _run.run(events, argv, opts) -> reading, {status=, signal=, elapsed=,
 * user=, sys=, stopped_by=?} | nil, msg, errno[, status]: status is the
 * shell's for a command that cannot run (127 not found, 126 not runnable).
 * Without opts.targets the child is counted: it waits on a pipe until the
 * group is opened on it (inherit unless opts.inherit is false,
 * enable_on_exec), so counting starts at exec and includes its children;
 * the parent's own work is not counted.
 * opts.targets = {{pid=}|{cpus=}, ...}: these are counted instead, enabled
 * just before the child's exec (perf stat -a/-C/-p/-t), and the first
 * result is the list of their readings; argv may then be empty: counting
 * lasts until Ctrl-C/SIGTERM, or until opts.until_pid exits.
 * opts.interval_ms with opts.on_interval: every interval, on_interval(r,
 * seconds since exec) gets the cumulative reading(s) (perf stat -I); it
 * runs while the command does, so it should only print.  opts.interval_count:
 * that many ticks only; without a command the count then ends.
 * opts.on_start() is called once the groups and the control channel are
 * open, just before the command is let go.
 * elapsed runs from the exec (perf's span), not from the fork. */
static int l_run(lua_State *L)
{
	struct run_args a = {.inherit = 1};
	run_args(L, &a);
	char msg[PMC_ERR_MAX];
	struct lgroup *lg = NULL;
	int r = run_groups(L, &a, &lg, msg);
	if (r)
		return pmcsh_fail(L, msg, -r);
	/* perf stat -D and --control: the groups switched by ioctls in C,
	 * from child.c's wait, never through Lua */
	int controlled = a.delay_ms != 0 || a.control;
	struct run_switch sw;
	run_switch_of(L, &a, lg, &sw);
	struct pmc_control ctl = {.delay_ms = (int)a.delay_ms, .ctl = -1, .ack = -1, .set = run_switch, .ctx = &sw};
	if (a.control && (r = control_open(L, a.control, &ctl, msg, sizeof msg)))
		return pmcsh_fail(L, msg, -r);
	if (a.on_start) {  /* stat's "Events disabled": after the channel's refusals, before the command */
		lua_pushvalue(L, a.on_start);
		if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
			pmc_control_close(&ctl);
			return lua_error(L);
		}
	}
	struct pmc_child child = {0};
	if ((r = run_start(L, &a, lg, &child, msg))) {
		pmc_control_close(&ctl);
		return pmcsh_fail(L, msg, -r);
	}
	struct run_tick tk = {L, a.cb, a.gtab, lg, 0};
	struct pmc_child_wait_opts o = {.until_pid = (pid_t)a.until_pid, .interval_ms = (long)a.interval_ms,
					.interval_count = (long)a.interval_count,
					.tick = a.cb ? run_tick : NULL, .ctx = &tk, .control = controlled ? &ctl : NULL};
	struct pmc_child_status st;
	pmc_child_wait(&child, &o, &st);
	if (st.interrupted)  /* no "interrupted!" from the Lua hook */
		lua_sethook(L, NULL, 0, 0);
	if (tk.failed) {
		pmc_control_close(&ctl);
		return lua_error(L);  /* the callback's error, after the child is gone */
	}
	int n = run_results(L, &a, lg, &st, controlled ? &ctl : NULL);
	pmc_control_close(&ctl);
	return n;
}

static const luaL_Reg funcs[] = {
	{"run", l_run},
	{NULL, NULL}
};

int luaopen_pmcsh__run(lua_State *L)
{
	luaL_newlib(L, funcs);
	return 1;
}
