/* Event names (see counter.h): libpfm4 encoding, perf's generic names and
 * raw rNNNN, the sysfs form through sysfs.c, suggestions for unknown names,
 * the listing of every event and the message for a failed open.  Pure C:
 * never prints, never exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "counter.h"
#include "evmods.h"
#include "sysfs.h"
#include <ctype.h>
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <perfmon/pfmlib_perf_event.h>

/* ---- libpfm4 ------------------------------------------------------------ */

static int pfm_ready;
static char pfm_model[64];  /* the model this process was forced to, or "" */

/* A PMU whose events may be used here: libpfm4 found it (or was forced to
 * it); initialised once, it flags nothing stale present. */
static int pmu_usable(const pfm_pmu_info_t *pi)
{
	return pi->is_present;
}

/* Initialises libpfm4, once per process: libpfm 4.13 reads freed memory
 * when pfm_initialize follows pfm_terminate, so a process never changes its
 * model; another model is asked of a child (pfmforced.c).  force: the
 * model this process is for (set into LIBPFM_FORCE_PMU, which
 * pfm_initialize reads), before any other use of libpfm4; NULL: the host's
 * PMUs, or the user's own LIBPFM_FORCE_PMU. */
int pmc_pfm_init(const char *force, char *msg, size_t len)
{
	const char *want = force && *force ? force : NULL;
	if (pfm_ready) {
		if (!want || !strcmp(want, pfm_model))
			return 0;
		if (msg)
			snprintf(msg, len, "libpfm4 is already initialised for %s in this process; another model "
				 "is encoded in a child (pmc_forced_*)", pfm_model[0] ? pfm_model : "the host");
		return -EBUSY;
	}
	if (want)
		setenv("LIBPFM_FORCE_PMU", want, 1);
	const char *env = getenv("LIBPFM_FORCE_PMU");
	snprintf(pfm_model, sizeof pfm_model, "%s", env ? env : "");
	int ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		if (msg)
			snprintf(msg, len, "cannot initialise libpfm4%s%s: %s%s", want ? " for PMU " : "",
				 want ? want : "", pfm_strerror(ret),
				 want ? " (see pmc.list() or libpfm4's PMU names, e.g. skl, amd64_fam19h_zen3)" : "");
		return -EINVAL;
	}
	pfm_ready = 1;
	if (want) {
		/* libpfm4 ignores an unknown forced name: check it took. */
		for (int p = 0; p < PFM_PMU_MAX; p++) {
			pfm_pmu_info_t pi = {.size = sizeof(pi)};
			if (pfm_get_pmu_info(p, &pi) == PFM_SUCCESS && pi.is_present && pi.name &&
			    !strcmp(pi.name, want))
				return 0;
		}
		if (msg)
			snprintf(msg, len, "libpfm4 has no PMU model named '%s' (examples: skl, icl, spr, "
				 "amd64_fam19h_zen3, amd64_fam1ah_zen5)", want);
		return -EINVAL;
	}
	return 0;
}

const char *pmc_pfm_forced(void)
{
	return pfm_model[0] ? pfm_model : NULL;
}

static int pfm_need(void)
{
	return pfm_ready ? 0 : pmc_pfm_init(NULL, NULL, 0);
}


/* ---- generic perf names libpfm4 lacks, and the list for suggestions ---- */

/* perf's generic names, as perf's parse-events encodes them.  On the host
 * libpfm4's perf PMU encodes those it has (pfm), this table the rest;
 * forced to another model libpfm4 loads no perf PMU, and this table
 * encodes them all (they count the same on every model). */
#define HWC(id, op, res) (PERF_COUNT_HW_CACHE_##id | PERF_COUNT_HW_CACHE_OP_##op << 8 | \
			  PERF_COUNT_HW_CACHE_RESULT_##res << 16)
static const struct generic {
	const char *name;
	uint32_t type;
	uint64_t config;
	const char *enum_name;  /* listed as the perf PMU's description, as libpfm4 lists its own */
	int pfm;                /* libpfm4's perf PMU has it */
} generic[] = {
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "PERF_COUNT_HW_CPU_CYCLES", 1},
	{"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "PERF_COUNT_HW_CPU_CYCLES", 1},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "PERF_COUNT_HW_INSTRUCTIONS", 1},
	{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "PERF_COUNT_HW_CACHE_REFERENCES", 1},
	{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "PERF_COUNT_HW_CACHE_MISSES", 1},
	{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "PERF_COUNT_HW_BRANCH_INSTRUCTIONS", 1},
	{"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	 "PERF_COUNT_HW_BRANCH_INSTRUCTIONS", 1},
	{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, "PERF_COUNT_HW_BRANCH_MISSES", 1},
	{"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, "PERF_COUNT_HW_BUS_CYCLES", 1},
	{"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	 "PERF_COUNT_HW_STALLED_CYCLES_FRONTEND", 1},
	{"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
	 "PERF_COUNT_HW_STALLED_CYCLES_BACKEND", 1},
	{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, "PERF_COUNT_HW_REF_CPU_CYCLES", 1},
	{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "PERF_COUNT_SW_CPU_CLOCK", 1},
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "PERF_COUNT_SW_TASK_CLOCK", 1},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS", 1},
	{"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "PERF_COUNT_SW_PAGE_FAULTS", 1},
	{"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, "PERF_COUNT_SW_PAGE_FAULTS_MIN", 1},
	{"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, "PERF_COUNT_SW_PAGE_FAULTS_MAJ", 1},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "PERF_COUNT_SW_CONTEXT_SWITCHES", 1},
	{"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "PERF_COUNT_SW_CONTEXT_SWITCHES", 1},
	{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "PERF_COUNT_SW_CPU_MIGRATIONS", 1},
	{"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, "PERF_COUNT_SW_CPU_MIGRATIONS", 1},
	{"cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES, "PERF_COUNT_SW_CGROUP_SWITCHES", 1},
	{"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, "PERF_COUNT_SW_ALIGNMENT_FAULTS", 0},
	{"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, "PERF_COUNT_SW_EMULATION_FAULTS", 0},
	{"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, "PERF_COUNT_SW_DUMMY", 0},
	{"bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, "PERF_COUNT_SW_BPF_OUTPUT", 0},
	{"L1-dcache-loads", PERF_TYPE_HW_CACHE, HWC(L1D, READ, ACCESS), "PERF_COUNT_HW_CACHE_L1D", 1},
	{"L1-dcache-load-misses", PERF_TYPE_HW_CACHE, HWC(L1D, READ, MISS), "PERF_COUNT_HW_CACHE_L1D", 1},
	{"L1-icache-load-misses", PERF_TYPE_HW_CACHE, HWC(L1I, READ, MISS), "PERF_COUNT_HW_CACHE_L1I", 1},
	{"LLC-loads", PERF_TYPE_HW_CACHE, HWC(LL, READ, ACCESS), "PERF_COUNT_HW_CACHE_LL", 1},
	{"LLC-load-misses", PERF_TYPE_HW_CACHE, HWC(LL, READ, MISS), "PERF_COUNT_HW_CACHE_LL", 1},
	{"dTLB-loads", PERF_TYPE_HW_CACHE, HWC(DTLB, READ, ACCESS), "PERF_COUNT_HW_CACHE_DTLB", 1},
	{"dTLB-load-misses", PERF_TYPE_HW_CACHE, HWC(DTLB, READ, MISS), "PERF_COUNT_HW_CACHE_DTLB", 1},
	{"iTLB-load-misses", PERF_TYPE_HW_CACHE, HWC(ITLB, READ, MISS), "PERF_COUNT_HW_CACHE_ITLB", 1},
	{"branch-loads", PERF_TYPE_HW_CACHE, HWC(BPU, READ, ACCESS), "PERF_COUNT_HW_CACHE_BPU", 1},
	{"branch-load-misses", PERF_TYPE_HW_CACHE, HWC(BPU, READ, MISS), "PERF_COUNT_HW_CACHE_BPU", 1},
	{NULL, 0, 0, NULL, 0}
};

const char *pmc_generic_name(int i)
{
	return i >= 0 && (size_t)i < sizeof generic / sizeof *generic ? generic[i].name : NULL;
}

/* ---- the name's syntax: one parser (counter.h's pmc_name) ------------- */

/* perf's name, an alias or rNNNN: after its ':' only modifiers may follow. */
static int is_perf_name(const char *base, size_t n)
{
	if (n > 1 && base[0] == 'r' && strspn(base + 1, "0123456789abcdefABCDEF") >= n - 1)
		return 1;
	for (int i = 0; generic[i].name; i++)
		if (strlen(generic[i].name) == n && !strncmp(base, generic[i].name, n))
			return 1;
	return 0;
}

static int name_fail(char *msg, size_t len, const char *fmt, const char *a, const char *b)
{
	snprintf(msg, len, fmt, a, b);
	return -EINVAL;
}

/* mods (PMC_MOD_LETTERS: each once, p up to three times) into n->mods
 * and n->priv. */
static int set_mods(struct pmc_name *n, const char *mods, const char *name, char *msg, size_t len)
{
	for (const char *p = mods; *p; p++) {
		if (!strchr(PMC_MOD_LETTERS, *p))
			return name_fail(msg, len, "bad modifier '%s' in '%s' (perf's modifiers: u, k, h, G, H, p, pp, "
					 "ppp, P)", mods, name);
		if (*p != 'p' && strchr(p + 1, *p))
			return name_fail(msg, len, "modifier '%s' repeats a letter in '%s' (each once: :uk)", mods, name);
	}
	int np = 0;
	for (const char *p = mods; *p; p++)
		np += *p == 'p';
	if (np > 3)
		return name_fail(msg, len, "too many p in '%s' in '%s' (p, pp or ppp: precise_ip 1 to 3)", mods, name);
	if (np && strchr(mods, 'P'))
		return name_fail(msg, len, "both p and P in '%s' in '%s' (p, pp, ppp: that level; P: the highest the "
				 "PMU takes)", mods, name);
	snprintf(n->mods, sizeof n->mods, "%s", mods);
	int k = 0;
	for (const char *c = "ukh"; *c; c++)
		if (strchr(mods, *c))
			n->priv[k++] = *c;
	n->priv[k] = 0;
	return 0;
}

struct member_check {
	const struct pmc_name *group;
	const char *name;
	int n;
	char *msg;
	size_t len;
};

static int member_cb(void *ctx, const char *item, size_t len)
{
	struct member_check *c = ctx;
	struct pmc_name e;
	char m[PMC_NAME_MAX];
	if (len >= sizeof m)
		return name_fail(c->msg, c->len, "a member of '%.64s'%s is over 255 characters", c->name, "");
	snprintf(m, sizeof m, "%.*s", (int)len, item);
	int r = pmc_name_parse(m, &e, c->msg, c->len);
	if (r)
		return r;
	if (e.form == PMC_FORM_GROUP)
		return name_fail(c->msg, c->len, "a group inside the group '%s'%s (write {a,b})", c->name, "");
	if (e.priv[0] && c->group->priv[0])
		return name_fail(c->msg, c->len, "two privilege modifiers for '%s' in '%s': give the group's or the "
				 "member's", m, c->name);
	c->n++;
	return 0;
}

/* perf's weak group, {a,b}:W: the group's own letter, not its members'.
 * Copies mods without its first W into gm; 1 when there was one. */
static int weak_split(const char *mods, char *gm, size_t size)
{
	int weak = 0;
	size_t k = 0;
	for (const char *p = mods; *p && k + 1 < size; p++) {
		if (*p == 'W' && !weak)
			weak = 1;
		else
			gm[k++] = *p;
	}
	gm[k] = 0;
	return weak;
}

int pmc_name_parse(const char *name, struct pmc_name *n, char *msg, size_t len)
{
	memset(n, 0, sizeof *n);
	size_t l = name ? strlen(name) : 0;
	if (!l || l >= PMC_NAME_MAX)
		return name_fail(msg, len, "bad event name '%.64s'%s: empty or over 255 characters", name ? name : "", "");
	const char *close = strrchr(name, '}');
	if (name[0] == '{' || close) {
		/* {a,b}:mods */
		if (name[0] != '{' || !close || strchr(name + 1, '{') || strchr(name, '}') != close)
			return name_fail(msg, len, "unbalanced braces in '%s'%s (a group is {a,b} or {a,b}:u)", name, "");
		const char *mods = close + 1;
		if (*mods && (*mods != ':' || !mods[1]))
			return name_fail(msg, len, "bad group modifier '%s' in '%s' (write {a,b}:u)", mods, name);
		n->form = PMC_FORM_GROUP;
		snprintf(n->base, sizeof n->base, "%.*s", (int)(close - name - 1), name + 1);
		char gm[sizeof n->mods];
		n->weak = weak_split(*mods ? mods + 1 : "", gm, sizeof gm);
		int r = set_mods(n, gm, name, msg, len);
		if (r)
			return r;
		struct member_check c = {n, name, 0, msg, len};
		if ((r = pmc_split_list(n->base, 0, member_cb, &c)))
			return r;
		if (!c.n)
			return name_fail(msg, len, "no events in the group '%s'%s (write {a,b})", name, "");
		return 0;
	}
	const char *s1 = strchr(name, '/');
	if (s1) {
		/* pmu/terms/mods or pmu/terms/:mods (the terms judged by sysfs.c) */
		const char *s2 = strrchr(name, '/');
		if (s2 == s1)
			return name_fail(msg, len, "unbalanced slashes in '%s'%s: the sysfs form is pmu/event/ or "
					 "pmu/k=v,.../, modifiers after the slash (msr/tsc/u)", name, "");
		if (s1 == name || (size_t)(s1 - name) >= sizeof n->pmu)
			return name_fail(msg, len, "no PMU before the slash in '%s'%s (pmu/event/)", name, "");
		n->form = PMC_FORM_SYSFS;
		snprintf(n->pmu, sizeof n->pmu, "%.*s", (int)(s1 - name), name);
		snprintf(n->base, sizeof n->base, "%.*s", (int)(s2 + 1 - name), name);
		const char *mods = s2 + 1;
		if (*mods == ':' && !*++mods)
			return name_fail(msg, len, "no modifier after the ':' in '%s'%s", name, "");
		return set_mods(n, mods, name, msg, len);
	}
	if (strchr(name, ','))
		return name_fail(msg, len, "'%s' is a list, not one event%s (a group is {a,b})", name, "");
	/* NAME[:mods]: after libpfm4's PMU:: prefix, a last ':' segment of
	 * modifier letters is perf's modifier string; others are attributes */
	n->form = PMC_FORM_NAME;
	const char *start = strstr(name, "::");
	start = start ? start + 2 : name;
	const char *last = strrchr(start, ':');
	const char *mods = last && is_modstr(last + 1) ? last + 1 : "";
	size_t bl = *mods ? (size_t)(last - name) : l;
	snprintf(n->base, sizeof n->base, "%.*s", (int)bl, name);
	const char *prev = memrchr(start, ':', bl - (size_t)(start - name));
	if (prev && *mods && last - prev > 1 && strspn(prev + 1, PMC_MOD_LETTERS) == (size_t)(last - prev - 1))
		return name_fail(msg, len, "two modifier strings in '%s'%s: give one (:uk, not :u:k)", name, "");
	/* after perf's own names, libpfm4 takes only its name=value attributes */
	const char *seg = strchr(start, ':');
	for (int perf = seg && is_perf_name(start, (size_t)(seg - start)); perf && seg; seg = strchr(seg + 1, ':')) {
		size_t sl = strcspn(seg + 1, ":");
		if (!memchr(seg + 1, '=', sl) && (!sl || strspn(seg + 1, PMC_MOD_LETTERS) < sl)) {
			char bad[16];
			snprintf(bad, sizeof bad, "%.*s", (int)sl, seg + 1);
			return name_fail(msg, len, "bad modifier '%s' in '%s' (perf's modifiers: u, k, h, G, H, p, pp, ppp, "
					 "P)", bad, name);
		}
	}
	if (!*mods && last && !last[1])
		return name_fail(msg, len, "no modifier after the ':' in '%s'%s", name, "");
	return set_mods(n, mods, name, msg, len);
}

int pmc_name_compose(const struct pmc_name *n, const char *mods, char *out, size_t len)
{
	const char *sep = *mods && n->form != PMC_FORM_SYSFS ? ":" : "";
	int w = n->form == PMC_FORM_GROUP ? snprintf(out, len, "{%s}%s%s", n->base, sep, mods)
					  : snprintf(out, len, "%s%s%s", n->base, sep, mods);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

int pmc_split_list(const char *s, int keep_empty, int (*fn)(void *ctx, const char *item, size_t n), void *ctx)
{
	const char *from = s;
	int slashes = 0, braces = 0;
	for (const char *p = s;; p++) {
		if (!*p || (*p == ',' && slashes % 2 == 0 && braces == 0)) {
			const char *a = from, *b = p;
			while (a < b && isspace((unsigned char)*a))
				a++;
			while (b > a && isspace((unsigned char)b[-1]))
				b--;
			int r = b > a || keep_empty ? fn(ctx, a, (size_t)(b - a)) : 0;
			if (r || !*p)
				return r;
			from = p + 1;
			slashes = 0;
		} else if (*p == '/') {
			slashes++;
		} else if (*p == '{') {
			braces++;
		} else if (*p == '}' && braces > 0) {
			braces--;
		}
	}
}

/* ---- suggestions -------------------------------------------------------- */

int pmc_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 120 || lb > 120)
		return 1000;
	int row[122];
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int up = row[j];
			int cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			int v = diag + cost;
			if (row[j] + 1 < v) v = row[j] + 1;
			if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	return row[lb];
}

struct suggest {
	const char *want;
	int best[3];
	char names[3][PMC_NAME_MAX];
};

static void suggest_add(struct suggest *s, const char *name)
{
	int d = pmc_edit_distance(s->want, name);
	int limit = (int)strlen(s->want) / 3 + 2;
	if (d > limit)
		return;
	for (int i = 0; i < 3; i++)
		if (s->names[i][0] && !strcasecmp(s->names[i], name))
			return;
	for (int i = 0; i < 3; i++) {
		if (!s->names[i][0] || d < s->best[i]) {
			for (int k = 2; k > i; k--) {
				s->best[k] = s->best[k - 1];
				memcpy(s->names[k], s->names[k - 1], PMC_NAME_MAX);
			}
			s->best[i] = d;
			snprintf(s->names[i], PMC_NAME_MAX, "%s", name);
			return;
		}
	}
}

static int suggest_cb(void *ctx, const struct pmc_listed *e)
{
	struct suggest *s = ctx;
	suggest_add(s, e->name);
	const char *c = strstr(e->name, "::");
	if (c)
		suggest_add(s, c + 2);
	return 0;
}

static void unknown_msg(const char *name, char *msg, size_t len)
{
	struct suggest s;
	memset(&s, 0, sizeof s);
	struct pmc_name pn;
	char pmsg[PMC_ERR_MAX];
	const char *base = pmc_name_parse(name, &pn, pmsg, sizeof pmsg) ? name : pn.base;  /* without :u/:k */
	s.want = base;
	for (int i = 0; generic[i].name; i++)
		suggest_add(&s, generic[i].name);
	pmc_list(suggest_cb, &s);
	int n = snprintf(msg, len, "unknown event '%s'", name);
	for (int i = 0; i < 3 && s.names[i][0] && (size_t)n < len; i++)
		n += snprintf(msg + n, len - n, "%s%s", i ? ", " : "; did you mean ", s.names[i]);
	const char *c = strchr(base, ':');
	int tp = c && c > base && c[1] && !strchr(c + 1, ':') && !pmc_tracefs();
	if ((size_t)n < len)
		n += snprintf(msg + n, len - n, "%s%s", s.names[0][0] ? "? " : "; ",
			      tp ? "no tracefs is mounted for tracepoints (mount -t tracefs nodev /sys/kernel/tracing); " : "");
	if ((size_t)n < len)
		snprintf(msg + n, len - n, "pmc.list() or `pmcsh list PATTERN` shows the events here");
}

/* ---- resolution --------------------------------------------------------- */

static int resolve_pfm(const char *name, struct pmc_event *ev, char *msg, size_t len)
{
	int r = pfm_need();
	if (r) {
		snprintf(msg, len, "libpfm4 failed to initialise");
		return r;
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	char *fstr = NULL;
	pfm_perf_encode_arg_t arg;
	memset(&arg, 0, sizeof arg);
	arg.attr = &a;
	arg.size = sizeof arg;
	arg.fstr = &fstr;
	int ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		free(fstr);
		if (ret == PFM_ERR_NOTFOUND || ret == PFM_ERR_NOTSUPP)
			return -ENOENT;
		/* The event exists, an attribute is wrong: list what it accepts. */
		int n = snprintf(msg, len, "event '%s': %s", name, pfm_strerror(ret));
		char base[PMC_NAME_MAX];
		snprintf(base, sizeof base, "%s", name);
		char *c = strstr(base, "::");
		c = strchr(c ? c + 2 : base, ':');
		if (c)
			*c = 0;
		int idx = pfm_find_event(base);
		pfm_event_info_t info = {.size = sizeof(info)};
		if (idx >= 0 && pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) == PFM_SUCCESS) {
			n += snprintf(msg + n, n < (int)len ? len - n : 0, "; it accepts:");
			for (int i = 0; i < info.nattrs && n < (int)len; i++) {
				pfm_event_attr_info_t ai = {.size = sizeof(ai)};
				if (pfm_get_event_attr_info(idx, i, PFM_OS_PERF_EVENT_EXT, &ai) == PFM_SUCCESS)
					n += snprintf(msg + n, len - n, " %s", ai.name);
			}
		}
		return -EINVAL;
	}
	snprintf(ev->canon, sizeof ev->canon, "%s", fstr ? fstr : name);
	free(fstr);
	if (a.sample_period || a.freq) {
		/* libpfm4's period= and freq= (one union in the attr, with the
		 * freq bit) make the kernel sample: a count that interrupts
		 * itself every period, ten times the cost of the count alone */
		const char *at = name, *attr = NULL;
		while ((at = strchr(at, ':')) && !attr) {
			at++;
			if (!strncmp(at, "period", 6) || !strncmp(at, "freq", 4))
				attr = at;
		}
		int n = attr ? (int)strcspn(attr, ":") : 0;
		snprintf(msg, len, "event '%s': '%.*s' asks the kernel to sample, and pmcsh counts (it never samples); "
			 "leave out :%.*s", name, n, attr ? attr : "", n, attr ? attr : "");
		return -EINVAL;
	}
	ev->attr = a;
	ev->pfm_idx = arg.idx;
	pfm_event_info_t info = {.size = sizeof(info)};
	pfm_pmu_info_t pinfo = {.size = sizeof(pinfo)};
	if (pfm_get_event_info(arg.idx, PFM_OS_PERF_EVENT_EXT, &info) == PFM_SUCCESS &&
	    pfm_get_pmu_info(info.pmu, &pinfo) == PFM_SUCCESS) {
		if (!pmu_usable(&pinfo))
			return -ENOENT;
		snprintf(ev->pmu, sizeof ev->pmu, "%s", pinfo.name);
	}
	ev->source = PMC_SRC_PFM;
	return 0;
}

/* rNNNN: a raw config of the cpu PMU.  0, -EINVAL (more than 64 bits), or
 * 1 where base is no raw name. */
static int resolve_raw(const char *base, const char *mods, struct pmc_event *ev, char *msg, size_t len)
{
	if (base[0] != 'r' || !base[1] || strspn(base + 1, "0123456789abcdefABCDEF") != strlen(base + 1))
		return 1;
	if (strlen(base + 1) - strspn(base + 1, "0") > 16) {
		snprintf(msg, len, "bad raw event '%s': more than 64 bits", base);
		return -EINVAL;
	}
	ev->attr.type = PERF_TYPE_RAW;
	ev->attr.config = strtoull(base + 1, NULL, 16);
	parse_mods(mods, &ev->attr);
	snprintf(ev->pmu, sizeof ev->pmu, "cpu");
	snprintf(ev->canon, sizeof ev->canon, "r%llx%s%s", (unsigned long long)ev->attr.config,
		 *mods ? ":" : "", mods);
	ev->source = PMC_SRC_RAW;
	return 0;
}

/* perf's generic names, tracepoints and libpfm4's names: libpfm4's perf
 * PMU encodes the generic names it has, where it is loaded; the table the
 * rest.  0 or -errno with msg filled. */
static int resolve_named(const char *name, const char *base, const char *mods, struct pmc_event *ev, char *msg,
			 size_t len)
{
	int r;
	const struct generic *gen = NULL;
	for (int i = 0; generic[i].name && !gen; i++)
		if (!strcmp(base, generic[i].name))
			gen = &generic[i];
	if (gen && (!gen->pfm || pmc_pfm_forced())) {
		r = -ENOENT;
	} else if (!strstr(base, "::") && (r = pmc_resolve_tracepoint(base, mods, ev, msg, len)) != -ENOENT) {
		return r;  /* perf's SUBSYS:EVENT where tracefs has it, else libpfm4's EVENT:UMASK */
	} else if ((r = resolve_pfm(name, ev, msg, len)) == -EINVAL && *mods) {
		/* perf's modifier string (":uk", ":h", ":G", ":pp"), which libpfm4
		 * reads as one attribute it lacks: the event without it, then the
		 * modifiers as perf sets them.  ":u" or ":k" alone libpfm4 takes. */
		char pmsg[PMC_ERR_MAX];
		if (resolve_pfm(base, ev, pmsg, sizeof pmsg) == 0) {
			parse_mods(mods, &ev->attr);
			size_t cl = strlen(ev->canon);
			snprintf(ev->canon + cl, sizeof ev->canon - cl, ":%s", mods);
			r = 0;
		}
	}
	if (r == -ENOENT && gen) {
		memset(&ev->attr, 0, sizeof ev->attr);
		ev->attr.type = gen->type;
		ev->attr.config = gen->config;
		parse_mods(mods, &ev->attr);
		snprintf(ev->pmu, sizeof ev->pmu, "perf");
		snprintf(ev->canon, sizeof ev->canon, "%s", name);
		ev->pfm_idx = -1;
		ev->source = PMC_SRC_ALIAS;
		r = 0;
	}
	if (r == -ENOENT)
		unknown_msg(name, msg, len);
	return r;
}

/* What every resolved event gets from its encoding and its modifiers. */
static void resolved(struct pmc_event *ev, const char *mods)
{
	ev->attr.size = sizeof ev->attr;
	ev->precise_max = strchr(mods, 'P') != NULL;
	ev->precise_guest = strchr(mods, 'p') && !strpbrk(mods, "GH");
	ev->needs_cpu_pmu = ev->attr.type == PERF_TYPE_HARDWARE || ev->attr.type == PERF_TYPE_HW_CACHE ||
			    ev->attr.type == PERF_TYPE_RAW;
	/* the software clocks count nanoseconds */
	if (ev->attr.type == PERF_TYPE_SOFTWARE && !ev->unit[0] &&
	    (ev->attr.config == PERF_COUNT_SW_TASK_CLOCK || ev->attr.config == PERF_COUNT_SW_CPU_CLOCK))
		snprintf(ev->unit, sizeof ev->unit, "ns");
}

int pmc_resolve(const char *name, struct pmc_event *ev, char *msg, size_t len)
{
	memset(ev, 0, sizeof *ev);
	msg[0] = 0;
	ev->scale = 1.0;
	ev->pfm_idx = -1;
	if (!name || !*name || strlen(name) >= PMC_NAME_MAX) {
		snprintf(msg, len, "bad event name '%s'", name ? name : "");
		return -EINVAL;
	}
	snprintf(ev->name, sizeof ev->name, "%s", name);
	struct pmc_name pn;
	int r = pmc_name_parse(name, &pn, msg, len);
	if (r)
		return r;
	if (pn.form == PMC_FORM_GROUP) {
		snprintf(msg, len, "'%s' is a group: give its members to one pmc.group (pmcsh stat -e takes {a,b})", name);
		return -EINVAL;
	}
	if (pn.form == PMC_FORM_SYSFS)
		r = pmc_resolve_sysfs(name, ev, msg, len);
	else if ((r = resolve_raw(pn.base, pn.mods, ev, msg, len)) == 1)
		r = resolve_named(name, pn.base, pn.mods, ev, msg, len);
	if (r == 0)
		resolved(ev, pn.mods);
	return r;
}

/* ---- listing and info ------------------------------------------------------ */

int pmc_list(pmc_list_fn fn, void *ctx)
{
	int r = pfm_need();
	if (r)
		return r;
	char name[PMC_NAME_MAX];
	for (int p = 0; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pi = {.size = sizeof(pi)};
		if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || !pmu_usable(&pi))
			continue;
		for (int i = pi.first_event; i != -1; i = pfm_get_event_next(i)) {
			pfm_event_info_t ei = {.size = sizeof(ei)};
			if (pfm_get_event_info(i, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
				continue;
			snprintf(name, sizeof name, "%s::%s", pi.name, ei.name);
			struct pmc_listed e = {name, pi.name, ei.desc ? ei.desc : "", i};
			if ((r = fn(ctx, &e)))
				return r;
		}
		/* the kernel's generic events libpfm4's perf PMU lacks, listed with it */
		for (int k = 0; pi.pmu == PFM_PMU_PERF_EVENT && generic[k].name; k++) {
			if (generic[k].pfm)
				continue;
			struct pmc_listed e = {generic[k].name, pi.name, generic[k].enum_name, -1};
			if ((r = fn(ctx, &e)))
				return r;
		}
	}
	if (pmc_pfm_forced())
		return 0;  /* another model: this machine's sysfs PMUs and tracepoints do not apply */
	if ((r = pmc_list_tracepoints(fn, ctx)))
		return r;
	DIR *d = opendir(SYSFS_PMUS);
	if (!d)
		return 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[512];
		snprintf(path, sizeof path, SYSFS_PMUS "/%s/events", de->d_name);
		DIR *ed = opendir(path);
		if (!ed)
			continue;
		struct dirent *ee;
		while ((ee = readdir(ed))) {
			if (ee->d_name[0] == '.' || strchr(ee->d_name, '.'))
				continue;
			char body[256];
			snprintf(path, sizeof path, SYSFS_PMUS "/%.100s/events/%.200s", de->d_name, ee->d_name);
			if (pmc_read_text(path, body, sizeof body) < 0)
				body[0] = 0;
			char desc[300];
			snprintf(desc, sizeof desc, "sysfs event (%s)", body);
			snprintf(name, sizeof name, "%.100s/%.150s/", de->d_name, ee->d_name);
			struct pmc_listed e = {name, de->d_name, desc, -1};
			if ((r = fn(ctx, &e))) {
				closedir(ed);
				closedir(d);
				return r;
			}
		}
		closedir(ed);
	}
	closedir(d);
	return 0;
}

int pmc_models(pmc_model_fn fn, void *ctx)
{
	int r = pfm_need();
	if (r)
		return r;
	for (int p = 0; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pi = {.size = sizeof(pi)};
		if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || !pi.name)
			continue;  /* not built into this libpfm4 */
		struct pmc_model m = {pi.name, pi.desc ? pi.desc : "", pi.is_present, pi.nevents};
		if ((r = fn(ctx, &m)))
			return r;
	}
	return 0;
}

int pmc_pfm_lookup(const char *name, struct pmc_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->scale = 1.0;
	ev->pfm_idx = -1;
	if (pfm_need() || !name || strlen(name) >= PMC_NAME_MAX)
		return -ENOENT;
	const char *sep = strstr(name, "::");
	if (strchr(sep ? sep + 2 : name, ':'))
		return -ENOENT;  /* attributes given: the encoding's error stands */
	int idx = pfm_find_event(name);
	pfm_event_info_t info = {.size = sizeof(info)};
	pfm_pmu_info_t pinfo = {.size = sizeof(pinfo)};
	if (idx < 0 || pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS ||
	    pfm_get_pmu_info(info.pmu, &pinfo) != PFM_SUCCESS || !pmu_usable(&pinfo))
		return -ENOENT;
	snprintf(ev->name, sizeof ev->name, "%s", name);
	snprintf(ev->pmu, sizeof ev->pmu, "%s", pinfo.name);
	snprintf(ev->canon, sizeof ev->canon, "%s::%s", pinfo.name, info.name);
	ev->pfm_idx = idx;
	ev->source = PMC_SRC_PFM;
	return 0;
}

int pmc_event_attrs(const struct pmc_event *ev, const char **desc, pmc_attr_fn fn, void *ctx)
{
	if (ev->pfm_idx < 0)
		return -ENOENT;
	pfm_event_info_t ei = {.size = sizeof(ei)};
	if (pfm_get_event_info(ev->pfm_idx, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
		return -ENOENT;
	*desc = ei.desc;
	for (int i = 0; i < ei.nattrs; i++) {
		pfm_event_attr_info_t ai = {.size = sizeof(ai)};
		if (pfm_get_event_attr_info(ev->pfm_idx, i, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS)
			continue;
		struct pmc_attr a = {ai.name, ai.desc ? ai.desc : "", ai.type, ai.code, ai.is_dfl};
		int r = fn(ctx, &a);
		if (r)
			return r;
	}
	return 0;
}

int pmc_about(const char *name, struct pmc_event *ev, int *encoded, char *desc, size_t dlen, pmc_attr_fn fn,
	      void *ctx, char *msg, size_t len)
{
	int r = pmc_resolve(name, ev, msg, len);
	*encoded = r == 0;
	if (r == -EINVAL && pmc_pfm_lookup(name, ev) == 0)
		r = 0;  /* a bare event that needs a umask: its umasks, no encoding; msg says why */
	if (r)
		return r;
	const char *d = NULL;
	pmc_event_attrs(ev, &d, fn, ctx);
	if (!d && ev->source == PMC_SRC_SYSFS)
		d = "sysfs PMU event";
	snprintf(desc, dlen, "%s", d ? d : "");
	return 0;
}
