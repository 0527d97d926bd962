/* Another CPU model's events through a child (see pfmforced.h).  The
 * answer is a stream of records, each a tag byte and fields: a field is a
 * 32-bit length and that many bytes (strings with their NUL, integers as
 * int64_t, the event as struct pmc_event: the child is this very binary,
 * so the layout is the same).  'L' name pmu desc: a listed
 * event; 'A' name desc type code default: an attribute; 'E' event; last
 * 'R' status encoded msg desc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "pfmforced.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define ANSWER_MAX (64u << 20)  /* a whole model's list is about 1 MiB */

/* ---- the child ----------------------------------------------------------- */

static void put_field(const void *p, size_t n)
{
	uint32_t len = (uint32_t)n;
	fwrite(&len, sizeof len, 1, stdout);
	fwrite(p, 1, n, stdout);
}

static void put_str(const char *s)
{
	put_field(s ? s : "", strlen(s ? s : "") + 1);
}

static void put_int(int64_t v)
{
	put_field(&v, sizeof v);
}

static int child_list_cb(void *ctx, const struct pmc_listed *e)
{
	(void)ctx;
	putchar('L');
	put_str(e->name);
	put_str(e->pmu);
	put_str(e->desc);
	return 0;
}

static int child_attr_cb(void *ctx, const struct pmc_attr *a)
{
	(void)ctx;
	putchar('A');
	put_str(a->name);
	put_str(a->desc);
	put_int(a->type);
	put_int((int64_t)a->code);
	put_int(a->is_dfl);
	return 0;
}

/* One 'R' record: the status of a request (or of one event of a batch). */
static void put_result(int r, int encoded, const char *msg, const char *desc)
{
	putchar('R');
	put_int(r);
	put_int(encoded);
	put_str(msg);
	put_str(desc);
}

int pmc_forced_child(int argc, char **argv)
{
	signal(SIGINT, SIG_IGN);  /* the parent decides; it sees EOF if it goes */
	char msg[PMC_ERR_MAX] = "", desc[PMC_DESC_MAX] = "";
	int encoded = 0, r = -EINVAL;
	if (argc < 4) {
		snprintf(msg, sizeof msg, "usage: pmcsh " PMC_FORCED_ARG " MODEL list|about [EVENT...]");
	} else if ((r = pmc_pfm_init(argv[2], msg, sizeof msg)) == 0) {
		if (!strcmp(argv[3], "list")) {
			r = pmc_list(child_list_cb, NULL);
		} else if (!strcmp(argv[3], "about") && argc > 4) {
			/* each event's attributes, encoding and its own 'R' */
			for (int i = 4; i < argc; i++) {
				struct pmc_event ev;
				msg[0] = desc[0] = 0;
				encoded = 0;
				r = pmc_about(argv[i], &ev, &encoded, desc, sizeof desc, child_attr_cb, NULL, msg,
					      sizeof msg);
				if (r == 0) {
					putchar('E');
					put_field(&ev, sizeof ev);
				}
				put_result(r, encoded, msg, desc);
			}
			return fflush(stdout) == 0 ? 0 : 1;
		} else {
			r = -EINVAL;
			snprintf(msg, sizeof msg, "unknown request '%s'", argv[3]);
		}
	}
	/* a batch's every event gets the answer: an unknown model, say */
	for (int i = 4; i < argc || i == 4; i++)
		if (i == 4 || !strcmp(argv[3], "about"))
			put_result(r, encoded, msg, desc);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* ---- the parent ---------------------------------------------------------- */

/* libpfm4's PMU names: letters, digits and '_'; the name goes into the
 * child's environment. */
static int model_ok(const char *pmu, char *msg, size_t len)
{
	size_t n = strlen(pmu);
	if (n > 0 && n < 64 && strspn(pmu, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n)
		return 1;
	snprintf(msg, len, "bad PMU model name '%.80s': libpfm4's names are letters, digits and '_' "
		 "(e.g. skl, amd64_fam19h_zen3)", pmu);
	return 0;
}

/* Starts the child for `op` (and the nnames events of `names`) with
 * LIBPFM_FORCE_PMU=pmu, its stdout the write end of a pipe: *pid and
 * *rfd, the read end.  Returns 0 or -errno with msg filled (*pid -1). */
static int spawn_child(const char *pmu, const char *op, const char *const *names, size_t nnames, pid_t *pid,
		       int *rfd, char *msg, size_t len)
{
	*pid = -1;
	*rfd = -1;
	size_t nenv = 0;
	while (environ[nenv])
		nenv++;
	char **envp = calloc(nenv + 2, sizeof *envp);
	char **argv = calloc(nnames + 5, sizeof *argv);
	char *force = NULL;
	if (!envp || !argv || asprintf(&force, "LIBPFM_FORCE_PMU=%s", pmu) < 0) {
		free(envp);
		free(argv);
		snprintf(msg, len, "out of memory asking for PMU %s", pmu);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t i = 0; i < nenv; i++)
		if (strncmp(environ[i], "LIBPFM_FORCE_PMU=", 17))
			envp[k++] = environ[i];
	envp[k++] = force;
	/* the path, not /proc/self/exe itself: under valgrind that is the tool */
	char exe[4096];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[el > 0 ? el : 0] = 0;
	argv[0] = "pmcsh";
	argv[1] = PMC_FORCED_ARG;
	argv[2] = (char *)pmu;
	argv[3] = (char *)op;
	for (size_t i = 0; i < nnames; i++)
		argv[4 + i] = (char *)names[i];
	int fd[2] = {-1, -1}, r = 0;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	if (pipe2(fd, O_CLOEXEC) < 0 || posix_spawn_file_actions_adddup2(&fa, fd[1], 1) ||
	    (r = posix_spawn(pid, el > 0 ? exe : "/proc/self/exe", &fa, NULL, argv, envp))) {
		r = r ? r : errno;
		snprintf(msg, len, "cannot run pmcsh again to encode for PMU %s: %s", pmu, strerror(r));
		r = -r;
		*pid = -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	free(force);
	free(envp);
	free(argv);
	if (fd[1] >= 0)
		close(fd[1]);
	*rfd = fd[0];
	return r;
}

/* Reads fd to its end into *out (malloc'd, grown to at most ANSWER_MAX),
 * *n bytes.  Returns 0 or -errno with msg filled. */
static int read_answer(int fd, const char *pmu, char **out, size_t *n, char *msg, size_t len)
{
	size_t cap = 0;
	for (;;) {
		if (*n == cap) {
			char *p = cap < ANSWER_MAX ? realloc(*out, cap = cap ? 2 * cap : 65536) : NULL;
			if (!p) {
				snprintf(msg, len, "the answer for PMU %s is too large", pmu);
				return -ENOMEM;
			}
			*out = p;
		}
		ssize_t got = read(fd, *out + *n, cap - *n);
		if (got > 0) {
			*n += (size_t)got;
		} else if (got == 0) {
			return 0;
		} else if (errno != EINTR) {
			int r = -errno;
			snprintf(msg, len, "reading the answer for PMU %s: %s", pmu, strerror(-r));
			return r;
		}
	}
}

/* Runs the child for `op` (and the nnames events of `names`) and reads its
 * whole answer into *out (malloc'd, *n bytes).  Returns 0 or -errno with
 * msg filled. */
static int ask(const char *pmu, const char *op, const char *const *names, size_t nnames, char **out, size_t *n,
	       char *msg, size_t len)
{
	*out = NULL;
	*n = 0;
	if (!model_ok(pmu, msg, len))
		return -EINVAL;
	pid_t pid;
	int fd, r = spawn_child(pmu, op, names, nnames, &pid, &fd, msg, len);
	if (pid > 0)
		r = read_answer(fd, pmu, out, n, msg, len);
	if (fd >= 0)
		close(fd);  /* a child still writing gets EPIPE and ends */
	int st = 0;
	while (pid > 0 && waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (r == 0 && (!WIFEXITED(st) || WEXITSTATUS(st))) {
		snprintf(msg, len, "the child encoding for PMU %s failed (%s %d)", pmu,
			 WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
		r = -EIO;
	}
	if (r) {
		free(*out);
		*out = NULL;
	}
	return r;
}

/* A cursor over the answer. */
struct reader {
	const char *p, *end;
	int bad;
};

static const void *get_field(struct reader *rd, size_t *n)
{
	uint32_t len;
	if (rd->bad || (size_t)(rd->end - rd->p) < sizeof len) {
		rd->bad = 1;
		return NULL;
	}
	memcpy(&len, rd->p, sizeof len);
	rd->p += sizeof len;
	if ((size_t)(rd->end - rd->p) < len) {
		rd->bad = 1;
		return NULL;
	}
	const void *f = rd->p;
	rd->p += len;
	*n = len;
	return f;
}

static const char *get_str(struct reader *rd)
{
	size_t n;
	const char *s = get_field(rd, &n);
	if (s && (n == 0 || s[n - 1])) {
		rd->bad = 1;
		return NULL;
	}
	return s ? s : "";
}

static int64_t get_int(struct reader *rd)
{
	size_t n;
	const void *f = get_field(rd, &n);
	int64_t v = 0;
	if (f && n == sizeof v)
		memcpy(&v, f, sizeof v);
	else
		rd->bad = 1;
	return v;
}

/* Replays the answer from rd through the callbacks up to and including
 * its next 'R' record (one request, or one event of a batch).  Returns the
 * child's status, or -EIO for an answer that does not parse. */
static int replay_one(struct reader *rdp, pmc_list_fn lfn, pmc_attr_fn afn, void *ctx, struct pmc_event *ev,
		      int *encoded, char *desc, size_t dlen, char *msg, size_t len)
{
#define rd (*rdp)
	while (rd.p < rd.end && !rd.bad) {
		char tag = *rd.p++;
		if (tag == 'L') {
			struct pmc_listed e;
			e.name = get_str(&rd);
			e.pmu = get_str(&rd);
			e.desc = get_str(&rd);
			e.idx = -1;
			int r = rd.bad || !lfn ? 0 : lfn(ctx, &e);
			if (r)
				return r;
		} else if (tag == 'A') {
			struct pmc_attr a;
			a.name = get_str(&rd);
			a.desc = get_str(&rd);
			a.type = (int)get_int(&rd);
			a.code = (uint64_t)get_int(&rd);
			a.is_dfl = (int)get_int(&rd);
			if (!rd.bad && afn)
				afn(ctx, &a);
		} else if (tag == 'E') {
			size_t k;
			const void *f = get_field(&rd, &k);
			if (f && k == sizeof *ev && ev)
				memcpy(ev, f, sizeof *ev);
			else
				rd.bad = 1;
		} else if (tag == 'R') {
			int r = (int)get_int(&rd);
			int enc = (int)get_int(&rd);
			const char *m = get_str(&rd);
			const char *d = get_str(&rd);
			if (!rd.bad) {
				if (encoded)
					*encoded = enc;
				snprintf(msg, len, "%s", m);
				if (desc)
					snprintf(desc, dlen, "%s", d);
				return r;
			}
			rd.bad = 1;
		} else {
			rd.bad = 1;
		}
	}
#undef rd
	snprintf(msg, len, "the child's answer does not parse");
	return -EIO;
}

/* The whole answer to one request: one 'R' record, last. */
static int replay(const char *buf, size_t n, pmc_list_fn lfn, pmc_attr_fn afn, void *ctx, struct pmc_event *ev,
		  int *encoded, char *desc, size_t dlen, char *msg, size_t len)
{
	struct reader rd = {buf, buf + n, 0};
	int r = replay_one(&rd, lfn, afn, ctx, ev, encoded, desc, dlen, msg, len);
	if (r != -EIO && rd.p != rd.end) {
		snprintf(msg, len, "the child's answer does not parse");
		r = -EIO;
	}
	return r;
}

int pmc_forced_list(const char *pmu, pmc_list_fn fn, void *ctx, char *msg, size_t len)
{
	char *buf;
	size_t n;
	int r = ask(pmu, "list", NULL, 0, &buf, &n, msg, len);
	if (r == 0)
		r = replay(buf, n, fn, NULL, ctx, NULL, NULL, NULL, 0, msg, len);
	free(buf);
	return r;
}

int pmc_forced_about(const char *pmu, const char *name, struct pmc_event *ev, int *encoded, char *desc,
		     size_t dlen, pmc_attr_fn fn, void *ctx, char *msg, size_t len)
{
	memset(ev, 0, sizeof *ev);
	*encoded = 0;
	desc[0] = 0;
	char *buf;
	size_t n;
	int r = ask(pmu, "about", &name, 1, &buf, &n, msg, len);
	if (r == 0)
		r = replay(buf, n, NULL, fn, ctx, ev, encoded, desc, dlen, msg, len);
	free(buf);
	return r;
}

int pmc_forced_about_all(const char *pmu, const char *const *names, size_t n, struct pmc_forced_answer *a,
			 char *msg, size_t len)
{
	memset(a, 0, sizeof *a);
	if (n == 0) {
		snprintf(msg, len, "no event to encode for PMU %s", pmu);
		return -EINVAL;
	}
	return ask(pmu, "about", names, n, &a->buf, &a->n, msg, len);
}

int pmc_forced_about_next(struct pmc_forced_answer *a, struct pmc_event *ev, int *encoded, char *desc, size_t dlen,
			  pmc_attr_fn fn, void *ctx, char *msg, size_t len)
{
	memset(ev, 0, sizeof *ev);
	*encoded = 0;
	desc[0] = 0;
	struct reader rd = {a->buf + a->at, a->buf + a->n, 0};
	int r = replay_one(&rd, NULL, fn, ctx, ev, encoded, desc, dlen, msg, len);
	a->at = (size_t)(rd.p - a->buf);
	return r;
}

void pmc_forced_answer_free(struct pmc_forced_answer *a)
{
	free(a->buf);
	memset(a, 0, sizeof *a);
}
