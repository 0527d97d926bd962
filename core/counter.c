/* The counter layer (see counter.h).  Pure C: perf_event_open, libpfm4 and
 * the sysfs PMU description; never prints, never exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "counter.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <perfmon/pfmlib_perf_event.h>

#define SYSFS_PMUS "/sys/bus/event_source/devices"

/* ---- libpfm4 ------------------------------------------------------------ */

static int pfm_ready;
static char pfm_force[64];  /* forced by pmc_pfm_init */
static char env_force[64];  /* forced by the user's environment */
/* The PMUs libpfm4 found on this machine, recorded at the first plain
 * initialisation: pfm_terminate() leaves a forced PMU flagged present, so
 * after a forced session is_present alone would make skl "present" here. */
static unsigned char host_pmu[PFM_PMU_MAX];
static int host_recorded;

static void record_host_pmus(void)
{
	for (int p = 0; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pi = {.size = sizeof(pi)};
		host_pmu[p] = pfm_get_pmu_info(p, &pi) == PFM_SUCCESS && pi.is_present;
	}
	host_recorded = 1;
}

/* A PMU whose events may be used now: present, and when nothing is forced,
 * one of the machine's own. */
static int pmu_usable(int p, const pfm_pmu_info_t *pi)
{
	if (!pi->is_present)
		return 0;
	if (pfm_force[0] || env_force[0] || !host_recorded)
		return 1;
	return p >= 0 && p < PFM_PMU_MAX && host_pmu[p];
}

/* (Re)initialises libpfm4.  LIBPFM_FORCE_PMU is read by pfm_initialize, so
 * the variable is set around the call and restored after. */
int pmc_pfm_init(const char *force, char *msg, size_t len)
{
	const char *want = force && *force ? force : NULL;
	if (pfm_ready && ((!want && !pfm_force[0]) || (want && !strcmp(want, pfm_force))))
		return 0;
	if (want && !host_recorded && !getenv("LIBPFM_FORCE_PMU"))
		pmc_pfm_init(NULL, NULL, 0);  /* learn the host's PMUs before forcing */
	if (pfm_ready)
		pfm_terminate();
	pfm_ready = 0;
	pfm_force[0] = 0;
	char *saved = getenv("LIBPFM_FORCE_PMU");
	saved = saved ? strdup(saved) : NULL;
	if (want)  /* else the user's own LIBPFM_FORCE_PMU, if any, applies */
		setenv("LIBPFM_FORCE_PMU", want, 1);
	snprintf(env_force, sizeof env_force, "%s", !want && saved ? saved : "");
	int ret = pfm_initialize();
	if (saved)
		setenv("LIBPFM_FORCE_PMU", saved, 1);
	else
		unsetenv("LIBPFM_FORCE_PMU");
	free(saved);
	if (ret != PFM_SUCCESS) {
		if (msg)
			snprintf(msg, len, "cannot initialise libpfm4%s%s: %s%s", want ? " for PMU " : "",
				 want ? want : "", pfm_strerror(ret),
				 want ? " (see pmc.list() or libpfm4's PMU names, e.g. skl, amd64_fam19h_zen3)" : "");
		if (want) /* fall back to the host so later calls still work */
			pmc_pfm_init(NULL, NULL, 0);
		return -EINVAL;
	}
	if (want) {
		/* libpfm4 ignores an unknown forced name: check it took. */
		int found = 0;
		for (int p = 0; p < PFM_PMU_MAX && !found; p++) {
			pfm_pmu_info_t pi = {.size = sizeof(pi)};
			if (pfm_get_pmu_info(p, &pi) == PFM_SUCCESS && pi.is_present && pi.name &&
			    !strcmp(pi.name, want))
				found = 1;
		}
		if (!found) {
			if (msg)
				snprintf(msg, len, "libpfm4 has no PMU model named '%s' (examples: skl, icl, spr, "
					 "amd64_fam19h_zen3, amd64_fam1ah_zen5)", want);
			pfm_terminate();
			pfm_ready = 0;
			pmc_pfm_init(NULL, NULL, 0);
			return -EINVAL;
		}
		snprintf(pfm_force, sizeof pfm_force, "%s", want);
	} else if (!env_force[0] && !host_recorded) {
		record_host_pmus();
	}
	pfm_ready = 1;
	return 0;
}

const char *pmc_pfm_forced(void)
{
	return pfm_force[0] ? pfm_force : env_force[0] ? env_force : NULL;
}

static int pfm_need(void)
{
	return pfm_ready ? 0 : pmc_pfm_init(NULL, NULL, 0);
}

/* ---- small file helpers ------------------------------------------------- */

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = 0;
	return (int)n;
}

/* The core PMU: x86's cpu (cpu_core/cpu_atom on hybrids), Arm's armv8_*
 * or armv9_* (armv8_pmuv3, armv8_cortex_a57, ...). */
int pmc_have_cpu_pmu(void)
{
	DIR *d = opendir(SYSFS_PMUS);
	if (!d)
		return 0;
	int found = 0;
	for (struct dirent *de; !found && (de = readdir(d));)
		found = !strcmp(de->d_name, "cpu") || !strcmp(de->d_name, "cpu_core") || !strcmp(de->d_name, "cpu_atom") ||
			!strncmp(de->d_name, "armv8_", 6) || !strncmp(de->d_name, "armv9_", 6);
	closedir(d);
	return found;
}

int pmc_paranoid(void)
{
	char buf[32];
	if (read_text("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) <= 0)
		return -100;
	return atoi(buf);
}

/* ---- generic perf names libpfm4 lacks, and the list for suggestions ---- */

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} aliases[] = {
	{"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
	{"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
	{"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY},
	{"bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT},
	{NULL, 0, 0}
};

/* perf's generic names (libpfm4's "perf" PMU resolves them). */
static const char *generic_names[] = {
	"cycles", "cpu-cycles", "instructions", "cache-references", "cache-misses",
	"branches", "branch-instructions", "branch-misses", "bus-cycles",
	"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
	"cpu-clock", "task-clock", "page-faults", "faults", "minor-faults",
	"major-faults", "context-switches", "cs", "cpu-migrations", "migrations",
	"alignment-faults", "emulation-faults", "dummy", "cgroup-switches",
	"L1-dcache-loads", "L1-dcache-load-misses", "L1-icache-load-misses",
	"LLC-loads", "LLC-load-misses", "dTLB-loads", "dTLB-load-misses",
	"iTLB-load-misses", "branch-loads", "branch-load-misses", NULL
};

/* Splits a trailing ":mods" made only of u,k,h,G,H (perf modifiers). */
static int parse_mods(const char *mods, struct perf_event_attr *a)
{
	int u = 0, k = 0, h = 0;
	for (const char *p = mods; *p; p++) {
		switch (*p) {
		case 'u': u = 1; break;
		case 'k': k = 1; break;
		case 'h': h = 1; break;
		case 'G': a->exclude_host = 1; break;
		case 'H': a->exclude_guest = 1; break;
		default: return -EINVAL;
		}
	}
	if (u || k || h) {
		a->exclude_user = !u;
		a->exclude_kernel = !k;
		a->exclude_hv = !h;
	}
	return 0;
}

static int is_modstr(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!strchr("ukhGH", *s))
			return 0;
	return 1;
}

/* ---- sysfs pmu/terms/ -------------------------------------------------- */

/* The sysfs name grammar of PMUs, events and format terms: a letter, digit
 * or _ first, then those and . -; nothing else reaches a path. */
static int sysfs_name_ok(const char *s)
{
	if (!isalnum((unsigned char)*s) && *s != '_')
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-' && *s != '.')
			return 0;
	return 1;
}

/* Places `val` into the bits that format file `fmt` ("config:0-7,32-35")
 * names, in the field it names. */
static int apply_format(const char *pmu, const char *term, uint64_t val, struct perf_event_attr *a,
			char *msg, size_t len)
{
	char path[512], fmt[256];
	snprintf(path, sizeof path, SYSFS_PMUS "/%s/format/%s", pmu, term);
	if (read_text(path, fmt, sizeof fmt) < 0) {
		snprintf(msg, len, "PMU %s has no format term '%s' (see %s/%s/format/)", pmu, term,
			 SYSFS_PMUS, pmu);
		return -EINVAL;
	}
	char *colon = strchr(fmt, ':');
	if (!colon) {
		snprintf(msg, len, "format %s of PMU %s reads '%s', not field:bits", term, pmu, fmt);
		return -EINVAL;
	}
	*colon = 0;
	__u64 *field = !strcmp(fmt, "config") ? &a->config :
			  !strcmp(fmt, "config1") ? &a->config1 :
			  !strcmp(fmt, "config2") ? &a->config2 : NULL;
	if (!field) {
		snprintf(msg, len, "format %s of PMU %s uses field %s, which pmcsh does not set", term, pmu, fmt);
		return -EINVAL;
	}
	char *save = NULL;
	for (char *r = strtok_r(colon + 1, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		int lo, hi;
		if (sscanf(r, "%d-%d", &lo, &hi) != 2)
			hi = lo = atoi(r);
		for (int b = lo; b <= hi && b < 64; b++) {
			if (val & 1)
				*field |= 1ULL << b;
			val >>= 1;
		}
	}
	return 0;
}

/* Applies "k=v,k2,..." terms of PMU `pmu` to `a`; an event alias term is
 * expanded from events/NAME (with its .scale/.unit). */
static int apply_terms(const char *pmu, char *terms, struct pmc_event *ev, int depth, char *msg, size_t len)
{
	char *save = NULL;
	for (char *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*t))
			t++;
		if (!*t)
			continue;
		char *eq = strchr(t, '=');
		uint64_t val = 1;
		if (eq) {
			*eq = 0;
			char *end;
			errno = 0;
			val = strtoull(eq + 1, &end, 0);
			if (errno || *end) {
				snprintf(msg, len, "bad value '%s' for term %s of %s", eq + 1, t, pmu);
				return -EINVAL;
			}
		}
		if (!sysfs_name_ok(t)) {
			snprintf(msg, len, "bad term '%.64s' for PMU %s: a term is a name of letters, digits, _ . -", t, pmu);
			return -EINVAL;
		}
		if (!strcmp(t, "config")) { ev->attr.config = val; continue; }
		if (!strcmp(t, "config1")) { ev->attr.config1 = val; continue; }
		if (!strcmp(t, "config2")) { ev->attr.config2 = val; continue; }
		if (!strcmp(t, "name")) continue;
		char path[512], body[512];
		snprintf(path, sizeof path, SYSFS_PMUS "/%s/format/%s", pmu, t);
		if (access(path, R_OK) == 0) {
			int r = apply_format(pmu, t, val, &ev->attr, msg, len);
			if (r)
				return r;
			continue;
		}
		snprintf(path, sizeof path, SYSFS_PMUS "/%s/events/%s", pmu, t);
		if (!eq && depth == 0 && read_text(path, body, sizeof body) >= 0) {
			int r = apply_terms(pmu, body, ev, 1, msg, len);
			if (r)
				return r;
			char extra[64];
			snprintf(path, sizeof path, SYSFS_PMUS "/%s/events/%s.scale", pmu, t);
			if (read_text(path, extra, sizeof extra) > 0)
				ev->scale = strtod(extra, NULL);
			snprintf(path, sizeof path, SYSFS_PMUS "/%s/events/%s.unit", pmu, t);
			if (read_text(path, extra, sizeof extra) > 0)
				snprintf(ev->unit, sizeof ev->unit, "%.31s", extra);
			continue;
		}
		snprintf(msg, len, "PMU %s has no event or term '%s' (see %s/%s/events/ and format/)", pmu, t,
			 SYSFS_PMUS, pmu);
		return -ENOENT;
	}
	return 0;
}

static void read_cpumask(const char *pmu, struct pmc_event *ev)
{
	char path[512], buf[256];
	snprintf(path, sizeof path, SYSFS_PMUS "/%s/cpumask", pmu);
	ev->ncpumask = 0;
	if (read_text(path, buf, sizeof buf) <= 0)
		return;
	char *save = NULL;
	for (char *r = strtok_r(buf, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		int lo, hi;
		if (sscanf(r, "%d-%d", &lo, &hi) != 2)
			hi = lo = atoi(r);
		for (int c = lo; c <= hi && ev->ncpumask < 8; c++)
			ev->cpumask[ev->ncpumask++] = c;
	}
}

/* "pmu/terms/" with modifiers ":u" or directly after the slash ("/u"). */
static int resolve_sysfs(const char *name, struct pmc_event *ev, char *msg, size_t len)
{
	char buf[PMC_NAME_MAX];
	snprintf(buf, sizeof buf, "%s", name);
	char *s1 = strchr(buf, '/');
	char *s2 = s1 ? strrchr(buf, '/') : NULL;
	if (!s1 || s2 == s1) {
		snprintf(msg, len, "bad event '%s': the sysfs form is pmu/event/ or pmu/k=v,.../ (with :u or :k)",
			 name);
		return -EINVAL;
	}
	*s1 = 0;
	*s2 = 0;
	const char *pmu = buf, *mods = s2 + 1;
	if (!sysfs_name_ok(pmu)) {
		snprintf(msg, len, "bad PMU name '%.64s' in '%.64s': a PMU is named with letters, digits, _ . -", pmu, name);
		return -EINVAL;
	}
	if (strspn(s1 + 1, ", \t") == strlen(s1 + 1)) {
		snprintf(msg, len, "bad event '%.64s': no event or terms between the slashes (%s/EVENT/ or %s/k=v,.../)",
			 name, pmu, pmu);
		return -EINVAL;
	}
	if (*mods == ':')
		mods++;
	if (*mods && !is_modstr(mods)) {
		snprintf(msg, len, "bad modifier '%s' in '%s' (u, k, h, G, H)", mods, name);
		return -EINVAL;
	}
	char path[512], tbuf[32];
	snprintf(path, sizeof path, SYSFS_PMUS "/%s/type", pmu);
	if (read_text(path, tbuf, sizeof tbuf) <= 0) {
		snprintf(msg, len, "no PMU named '%s' on this machine (see %s/)", pmu, SYSFS_PMUS);
		return -ENOENT;
	}
	ev->attr.type = (uint32_t)strtoul(tbuf, NULL, 0);
	snprintf(ev->pmu, sizeof ev->pmu, "%.63s", pmu);
	char terms[PMC_NAME_MAX];
	snprintf(terms, sizeof terms, "%s", s1 + 1);
	int r = apply_terms(pmu, terms, ev, 0, msg, len);
	if (r)
		return r;
	parse_mods(mods, &ev->attr);
	read_cpumask(pmu, ev);
	snprintf(ev->canon, sizeof ev->canon, "%.63s/%.170s/%.8s", pmu, s1 + 1, mods);
	ev->source = PMC_SRC_SYSFS;
	return 0;
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
	char base[PMC_NAME_MAX];
	snprintf(base, sizeof base, "%s", name);
	char *colon = strrchr(base, ':');
	if (colon && colon > base && colon[-1] != ':' && is_modstr(colon + 1))
		*colon = 0; /* suggest on the name without :u/:k */
	s.want = base;
	for (int i = 0; generic_names[i]; i++)
		suggest_add(&s, generic_names[i]);
	pmc_list(suggest_cb, &s);
	int n = snprintf(msg, len, "unknown event '%s'", name);
	for (int i = 0; i < 3 && s.names[i][0] && (size_t)n < len; i++)
		n += snprintf(msg + n, len - n, "%s%s", i ? ", " : "; did you mean ", s.names[i]);
	if ((size_t)n < len)
		snprintf(msg + n, len - n, "%s (pmc.list() or `pmcsh list PATTERN` shows the events here)",
			 s.names[0][0] ? "?" : ";");
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
	ev->attr = a;
	ev->pfm_idx = arg.idx;
	snprintf(ev->canon, sizeof ev->canon, "%s", fstr ? fstr : name);
	free(fstr);
	pfm_event_info_t info = {.size = sizeof(info)};
	pfm_pmu_info_t pinfo = {.size = sizeof(pinfo)};
	if (pfm_get_event_info(arg.idx, PFM_OS_PERF_EVENT_EXT, &info) == PFM_SUCCESS &&
	    pfm_get_pmu_info(info.pmu, &pinfo) == PFM_SUCCESS) {
		if (!pmu_usable(info.pmu, &pinfo))
			return -ENOENT;
		snprintf(ev->pmu, sizeof ev->pmu, "%s", pinfo.name);
	}
	ev->source = PMC_SRC_PFM;
	return 0;
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
	int r;
	if (strchr(name, '/')) {
		r = resolve_sysfs(name, ev, msg, len);
		goto done;
	}
	/* Our part: rNNNN raw and the few generic names libpfm4 lacks. */
	char base[PMC_NAME_MAX];
	snprintf(base, sizeof base, "%s", name);
	const char *mods = "";
	char *colon = strchr(base, ':');
	if (colon && strchr(base, ':') == strrchr(base, ':') && is_modstr(colon + 1)) {
		*colon = 0;
		mods = colon + 1;
	}
	if (base[0] == 'r' && base[1] && strspn(base + 1, "0123456789abcdefABCDEF") == strlen(base + 1) &&
	    strlen(base + 1) - strspn(base + 1, "0") > 16) {
		snprintf(msg, len, "bad raw event '%s': more than 64 bits", base);
		return -EINVAL;
	}
	if (base[0] == 'r' && base[1] && strspn(base + 1, "0123456789abcdefABCDEF") == strlen(base + 1)) {
		ev->attr.type = PERF_TYPE_RAW;
		ev->attr.config = strtoull(base + 1, NULL, 16);
		parse_mods(mods, &ev->attr);
		snprintf(ev->pmu, sizeof ev->pmu, "cpu");
		snprintf(ev->canon, sizeof ev->canon, "r%llx%s%s", (unsigned long long)ev->attr.config,
			 *mods ? ":" : "", mods);
		ev->source = PMC_SRC_RAW;
		r = 0;
		goto done;
	}
	for (int i = 0; aliases[i].name; i++) {
		if (!strcmp(base, aliases[i].name)) {
			ev->attr.type = aliases[i].type;
			ev->attr.config = aliases[i].config;
			parse_mods(mods, &ev->attr);
			snprintf(ev->pmu, sizeof ev->pmu, "perf");
			snprintf(ev->canon, sizeof ev->canon, "%s", name);
			ev->source = PMC_SRC_ALIAS;
			r = 0;
			goto done;
		}
	}
	r = resolve_pfm(name, ev, msg, len);
	if (r == -ENOENT)
		unknown_msg(name, msg, len);
done:
	if (r == 0) {
		ev->attr.size = sizeof ev->attr;
		ev->needs_cpu_pmu = ev->attr.type == PERF_TYPE_HARDWARE || ev->attr.type == PERF_TYPE_HW_CACHE ||
				    ev->attr.type == PERF_TYPE_RAW;
		/* the software clocks count nanoseconds */
		if (ev->attr.type == PERF_TYPE_SOFTWARE && !ev->unit[0] &&
		    (ev->attr.config == PERF_COUNT_SW_TASK_CLOCK || ev->attr.config == PERF_COUNT_SW_CPU_CLOCK))
			snprintf(ev->unit, sizeof ev->unit, "ns");
	}
	return r;
}

void pmc_open_strerror(const struct pmc_event *ev, int err, char *msg, size_t len)
{
	if (ev->needs_cpu_pmu && !pmc_have_cpu_pmu() &&
	    (err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == EINVAL)) {
		snprintf(msg, len, "cannot count %s: no hardware PMU is exposed on this machine (%s has no cpu PMU; "
			 "a VM without PMU passthrough?); software events (task-clock, page-faults, ...) and "
			 "msr/tsc/ still work", ev->name, SYSFS_PMUS);
		return;
	}
	switch (err) {
	case EACCES:
	case EPERM: {
		int p = pmc_paranoid();
		const char *allows =
			p >= 3 ? "no perf_event_open at all without CAP_PERFMON (a Debian setting)" :
			p == 2 ? "user-space-only counting (:u) of your own processes" :
			p == 1 ? "user and kernel counting of your own processes, no cpu-wide counting" :
			p == 0 ? "cpu-wide counting, no raw tracepoints" : "everything";
		if (p <= -1 && p > -100) {  /* not the sysctl: a security module or seccomp said no */
			snprintf(msg, len, "permission denied opening %s, although kernel.perf_event_paranoid is %d (%s): "
				 "a security module (SELinux, AppArmor) or a seccomp filter refuses perf_event_open here",
				 ev->name, p, allows);
			return;
		}
		/* :u helps only at 2, for an event that still counts the kernel, on a
		 * PMU that filters by privilege (the cpu PMU and the software events) */
		int user_only = ev->attr.exclude_kernel && ev->attr.exclude_hv;
		int filters = ev->needs_cpu_pmu || ev->attr.type == PERF_TYPE_SOFTWARE;
		char base[PMC_NAME_MAX], hint[PMC_NAME_MAX + 64] = "";
		snprintf(base, sizeof base, "%s", ev->name);
		char *c = strrchr(base, ':');
		if (c && c > base && c[-1] != ':' && is_modstr(c + 1))
			*c = 0;
		if (p == 2 && !user_only && filters)
			snprintf(hint, sizeof hint, "count user space only (%s:u), or ", base);
		snprintf(msg, len, "permission denied opening %s: kernel.perf_event_paranoid is %d, which allows %s; "
			 "%srun as root / with CAP_PERFMON, or lower it (sysctl kernel.perf_event_paranoid=%s)",
			 ev->name, p, allows, hint, p >= 2 ? "1 for kernel counting, 0 for cpu-wide" : "0, for cpu-wide");
		return;
	}
	case EMFILE:
	case ENFILE: {
		struct rlimit rl;
		getrlimit(RLIMIT_NOFILE, &rl);
		snprintf(msg, len, "too many open files opening %s: each event holds one descriptor (limit %llu); "
			 "close groups you no longer need (g:close()) or raise the limit (ulimit -n)", ev->name,
			 (unsigned long long)rl.rlim_cur);
		return;
	}
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		snprintf(msg, len, "cannot count %s on this machine: the %s PMU does not support it (%s)", ev->name,
			 ev->pmu, strerror(err));
		return;
	case ESRCH:
		snprintf(msg, len, "cannot count %s: no such process", ev->name);
		return;
	default:
		snprintf(msg, len, "cannot open %s (%s): %s", ev->name, ev->canon, strerror(err));
	}
}

/* ---- arithmetic --------------------------------------------------------- */

int pmc_scale(uint64_t raw, uint64_t enabled, uint64_t running, double scale, double *value, int *mux)
{
	*mux = 0;
	if (enabled > 0 && running == 0) {
		*value = 0;
		return -EBUSY;
	}
	double v = (double)raw * scale;
	if (running < enabled) {
		v *= (double)enabled / (double)running;
		*mux = 1;
	}
	*value = v;
	return 0;
}

/* ---- groups --------------------------------------------------------------- */

static long sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group_fd, flags);
}

/* Events with the same key share a perf group: every software event in one
 * (task-clock and cpu-clock included), every hardware and raw event on the
 * cpu PMU, each other PMU its own. */
static long pmu_key(const struct pmc_event *e)
{
	return e->needs_cpu_pmu ? -1 : (long)e->attr.type;
}

void pmc_group_layout(struct pmc_group *g)
{
	g->nsub = 0;
	for (int i = 0; i < g->nev; i++) {
		int s;
		for (s = 0; s < g->nsub; s++)
			if (pmu_key(&g->ev[g->sub[s].ev[0]]) == pmu_key(&g->ev[i]))
				break;
		if (s == g->nsub) {
			memset(&g->sub[s], 0, sizeof g->sub[s]);
			g->nsub++;
		}
		g->sub[s].ev[g->sub[s].n++] = i;
	}
}

void pmc_group_close(struct pmc_group *g)
{
	for (int s = 0; s < g->nsub; s++) {
		struct pmc_sub *sb = &g->sub[s];
		for (int k = 0; k < sb->ninst; k++)
			for (int j = sb->n - 1; j >= 0; j--) {  /* siblings before the leader */
				if (sb->inst[k].page[j]) {
					munmap(sb->inst[k].page[j], (size_t)sysconf(_SC_PAGESIZE));
					sb->inst[k].page[j] = NULL;
				}
				if (sb->inst[k].fd[j] >= 0) {
					close(sb->inst[k].fd[j]);
					sb->inst[k].fd[j] = -1;
				}
			}
		free(sb->inst);
		sb->inst = NULL;
		sb->ninst = 0;
	}
	g->open = 0;
	g->enabled = 0;
	g->mapped = 0;
}

#if defined(__aarch64__)
/* kernel.perf_user_access = 1: events that ask may be read from user space */
static int arm_user_access(void)
{
	char buf[8];
	return read_text("/proc/sys/kernel/perf_user_access", buf, sizeof buf) > 0 && buf[0] == '1';
}
#endif

int pmc_group_open(struct pmc_group *g, const struct pmc_target *t, int *bad)
{
	*bad = -1;
	for (int s = 0; s < g->nsub; s++) {
		struct pmc_sub *sb = &g->sub[s];
		const struct pmc_event *lead = &g->ev[sb->ev[0]];
		int ninst = lead->ncpumask > 0 ? lead->ncpumask : t->ncpus > 0 ? t->ncpus : 1;
		sb->inst = calloc((size_t)ninst, sizeof *sb->inst);
		if (!sb->inst) {
			pmc_group_close(g);
			return -ENOMEM;
		}
		sb->ninst = ninst;
		for (int k = 0; k < ninst; k++) {
			struct pmc_inst *in = &sb->inst[k];
			for (int j = 0; j < PMC_MAX_EVENTS; j++)
				in->fd[j] = -1;
			if (lead->ncpumask > 0) {
				in->pid = -1;  /* uncore: counts per socket, never per task */
				in->cpu = lead->cpumask[k];
			} else if (t->ncpus > 0) {
				in->pid = -1;
				in->cpu = t->cpus[k];
			} else {
				in->pid = t->pid;
				in->cpu = -1;
			}
			in->socket = in->cpu >= 0 ? pmc_cpu_socket(in->cpu) : -1;
			for (int j = 0; j < sb->n; j++) {
				struct perf_event_attr a = g->ev[sb->ev[j]].attr;
				a.size = sizeof a;
				/* read() of the leader returns, per the kernel ABI:
				 * u64 nr, time_enabled, time_running; {u64 value, id}[nr] */
				a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
						PERF_FORMAT_TOTAL_TIME_RUNNING;
				a.disabled = j == 0;
				a.inherit = t->inherit && in->pid >= 0;
				a.enable_on_exec = j == 0 && t->enable_on_exec;
				a.pinned = j == 0 && t->pinned;
#if defined(__aarch64__)
				/* Arm grants user reads per event (the PMU's format term
				 * rdpmc = config1:1), to a task's own counters only */
				if (g->ev[sb->ev[j]].needs_cpu_pmu && t->pid == 0 && t->ncpus == 0 && !t->inherit &&
				    arm_user_access())
					a.config1 |= 2;
#endif
				long fd = sys_perf_event_open(&a, in->pid, in->cpu, j ? in->fd[0] : -1, PERF_FLAG_FD_CLOEXEC);
				if (fd < 0) {
					int e = errno;
					*bad = sb->ev[j];
					pmc_group_close(g);
					return -e;
				}
				in->fd[j] = (int)fd;
				if (ioctl((int)fd, PERF_EVENT_IOC_ID, &in->id[j]) < 0) {
					int e = errno;
					*bad = sb->ev[j];
					pmc_group_close(g);
					return -e;
				}
			}
		}
	}
	g->open = 1;
	g->exec_enabled = t->enable_on_exec;
	g->current = !t->enable_on_exec;  /* new counters read zero, as cur_* do */
	return 0;
}

int pmc_group_nfds(const struct pmc_group *g)
{
	int n = 0;
	for (int s = 0; s < g->nsub; s++)
		for (int k = 0; k < g->sub[s].ninst; k++)
			for (int j = 0; j < g->sub[s].n; j++)
				n += g->sub[s].inst[k].fd[j] >= 0;
	return n;
}

/* Siblings are opened enabled and follow their leader, so an ioctl on the
 * leader alone switches the group.  Not PERF_IOC_FLAG_GROUP: it also
 * toggles each sibling, and on 6.18 a software sibling disabled that way
 * never counts again (spec/fixtures/swgroup.c shows it in plain C). */
static int all_leaders(struct pmc_group *g, unsigned long req)
{
	for (int s = 0; s < g->nsub; s++)
		for (int k = 0; k < g->sub[s].ninst; k++)
			if (ioctl(g->sub[s].inst[k].fd[0], req, 0) < 0)
				return -errno;
	return 0;
}

int pmc_group_enable(struct pmc_group *g)
{
	g->current = 0;
	int r = all_leaders(g, PERF_EVENT_IOC_ENABLE);
	if (!r)
		g->enabled = 1;
	return r;
}

int pmc_group_start(struct pmc_group *g)
{
	if (!g->current) {
		int r = pmc_group_snapshot(g);
		if (r)
			return r;
	}
	pmc_group_rebase(g);
	return pmc_group_enable(g);
}

int pmc_group_disable(struct pmc_group *g)
{
	int r = all_leaders(g, PERF_EVENT_IOC_DISABLE);
	if (!r)
		g->enabled = 0;
	return r;
}

static int inst_read(const struct pmc_sub *sb, struct pmc_inst *in)
{
	uint64_t buf[3 + 2 * PMC_MAX_EVENTS];
	ssize_t n = read(in->fd[0], buf, sizeof buf);
	if (n < 0)
		return -errno;
	if (n == 0)  /* a pinned group that lost its counters is in error state */
		return -EBUSY;
	if (n < (ssize_t)(3 * sizeof(uint64_t)) || buf[0] != (uint64_t)sb->n)
		return -EIO;
	in->cur_en = buf[1];   /* time enabled, ns */
	in->cur_run = buf[2];  /* time running on the PMU, ns */
	for (uint64_t i = 0; i < buf[0]; i++) {
		uint64_t v = buf[3 + 2 * i], id = buf[4 + 2 * i];
		for (int j = 0; j < sb->n; j++)
			if (in->id[j] == id)
				in->cur_raw[j] = v;
	}
	return 0;
}

/* An instance with mapped pages, while its events are on the PMU: the
 * leader's page gives the times, each page its count.  -EAGAIN when any is
 * off the PMU (then read() tells the truth). */
static int inst_read_fast(const struct pmc_sub *sb, struct pmc_inst *in)
{
	uint64_t raw[PMC_MAX_EVENTS];
	struct pmc_mmap_value v;
	for (int j = 0; j < sb->n; j++) {
		int r = pmc_rdpmc_read(in->page[j], &v);
		if (r)
			return r;
		raw[j] = v.count;
		if (j == 0) {
			in->cur_en = v.enabled;
			in->cur_run = v.running;
		}
	}
	memcpy(in->cur_raw, raw, sizeof raw[0] * (size_t)sb->n);
	return 0;
}

int pmc_group_snapshot(struct pmc_group *g)
{
	for (int s = 0; s < g->nsub; s++)
		for (int k = 0; k < g->sub[s].ninst; k++) {
			struct pmc_inst *in = &g->sub[s].inst[k];
			if (in->page[0]) {
				if (g->enabled && inst_read_fast(&g->sub[s], in) == 0) {
					g->fast_reads++;
					continue;
				}
				g->slow_reads++;
			}
			int r = inst_read(&g->sub[s], in);
			if (r)
				return r;
		}
	g->current = !g->enabled && !g->exec_enabled;
	return 0;
}

int pmc_cpu_socket(int cpu)
{
	char path[128], buf[32];
	snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
	if (read_text(path, buf, sizeof buf) <= 0)
		return 0;
	int v = atoi(buf);
	return v < 0 ? 0 : v;
}

int pmc_inst_delta(const struct pmc_group *g, int ev, int k, struct pmc_count *out, int *ninst, int *cpu,
		   int *socket)
{
	memset(out, 0, sizeof *out);
	*ninst = 0;
	for (int s = 0; s < g->nsub; s++) {
		const struct pmc_sub *sb = &g->sub[s];
		for (int j = 0; j < sb->n; j++) {
			if (sb->ev[j] != ev)
				continue;
			*ninst = sb->ninst;
			if (k < 0 || k >= sb->ninst)
				return -ENOENT;
			const struct pmc_inst *in = &sb->inst[k];
			*cpu = in->cpu;
			*socket = in->socket;
			out->raw = in->cur_raw[j] - in->base_raw[j];
			out->enabled = in->cur_en - in->base_en;
			out->running = in->cur_run - in->base_run;
			return pmc_scale(out->raw, out->enabled, out->running, g->ev[ev].scale, &out->value,
					 &out->multiplexed);
		}
	}
	return -ENOENT;
}

void pmc_group_rebase(struct pmc_group *g)
{
	for (int s = 0; s < g->nsub; s++)
		for (int k = 0; k < g->sub[s].ninst; k++) {
			struct pmc_inst *in = &g->sub[s].inst[k];
			in->base_en = in->cur_en;
			in->base_run = in->cur_run;
			memcpy(in->base_raw, in->cur_raw, sizeof in->base_raw);
		}
}

int pmc_group_delta(const struct pmc_group *g, struct pmc_count *out, int *bad)
{
	*bad = -1;
	memset(out, 0, sizeof *out * (size_t)g->nev);
	for (int s = 0; s < g->nsub; s++) {
		const struct pmc_sub *sb = &g->sub[s];
		for (int k = 0; k < sb->ninst; k++) {
			const struct pmc_inst *in = &sb->inst[k];
			uint64_t en = in->cur_en - in->base_en, run = in->cur_run - in->base_run;
			for (int j = 0; j < sb->n; j++) {
				struct pmc_count *c = &out[sb->ev[j]];
				uint64_t raw = in->cur_raw[j] - in->base_raw[j];
				double v;
				int mux;
				if (pmc_scale(raw, en, run, g->ev[sb->ev[j]].scale, &v, &mux)) {
					*bad = sb->ev[j];
					return -EBUSY;
				}
				c->value += v;
				c->raw += raw;
				c->enabled += en;
				c->running += run;
				c->multiplexed |= mux;
			}
		}
	}
	return 0;
}

void pmc_group_accumulate(const struct pmc_group *g, uint64_t *raw, uint64_t *en, uint64_t *run)
{
	for (int s = 0; s < g->nsub; s++) {
		const struct pmc_sub *sb = &g->sub[s];
		for (int k = 0; k < sb->ninst; k++) {
			const struct pmc_inst *in = &sb->inst[k];
			for (int j = 0; j < sb->n; j++) {
				int i = sb->ev[j];
				raw[i] += in->cur_raw[j] - in->base_raw[j];
				en[i] += in->cur_en - in->base_en;
				run[i] += in->cur_run - in->base_run;
			}
		}
	}
}

/* ---- rdpmc ---------------------------------------------------------------- */

/* The kernel converts cycles to ns as cyc * mult >> shift.  cyc * mult
 * overflows 64 bits after minutes of TSC, so the high part (cyc >> shift)
 * and the low part (the remainder, < 2^shift) are multiplied separately. */
uint64_t pmc_mmap_time_delta(uint64_t cyc, uint16_t shift, uint32_t mult, uint64_t offset)
{
	if (shift == 0)
		return offset + cyc * mult;
	if (shift >= 64)
		return offset;
	uint64_t quot = cyc >> shift;
	uint64_t rem = cyc & ((1ULL << shift) - 1);
	return offset + quot * mult + ((rem * mult) >> shift);
}

/* Only the low bits the clock really has change since time_cycles. */
uint64_t pmc_mmap_cyc_short(uint64_t cyc, uint64_t time_cycles, uint64_t time_mask)
{
	return time_cycles + ((cyc - time_cycles) & time_mask);
}

/* rdpmc returns the counter's `width` bits; the kernel keeps the counter
 * negative (it starts at -period), so the bits are a signed value. */
int64_t pmc_sign_extend(uint64_t pmc, unsigned width)
{
	if (width == 0 || width >= 64)
		return (int64_t)pmc;
	unsigned sh = 64 - width;
	return (int64_t)(pmc << sh) >> sh;
}

int pmc_mmap_read_ops(const volatile struct perf_event_mmap_page *pc, const struct pmc_mmap_ops *ops,
		      struct pmc_mmap_value *out)
{
	uint32_t seq, idx, mult = 0;
	uint16_t shift = 0, width;
	uint64_t count, enabled, running, cyc = 0, toff = 0;
	int user_time;
	out->retries = 0;
	for (;;) {
		/* lock: a seqcount the kernel bumps around every update of the page */
		seq = pc->lock;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		enabled = pc->time_enabled;   /* as of the last update, ns */
		running = pc->time_running;
		idx = pc->index;              /* counter number + 1; 0: not on the PMU now */
		user_time = pc->cap_user_time;
		if (!pc->cap_user_rdpmc || !idx || !user_time)
			return -EAGAIN;
		count = (uint64_t)pc->offset; /* add to the counter's value */
		width = pc->pmc_width;
		uint64_t raw = ops->rdpmc(ops->ctx, idx - 1);
		cyc = ops->rdtsc(ops->ctx);
		if (pc->cap_user_time_short)
			cyc = pmc_mmap_cyc_short(cyc, pc->time_cycles, pc->time_mask);
		shift = pc->time_shift;
		mult = pc->time_mult;
		toff = pc->time_offset;
		count += (uint64_t)pmc_sign_extend(raw, width);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (pc->lock == seq)
			break;
		if (++out->retries > 1000)
			return -EAGAIN;  /* the kernel keeps rewriting it: give up, use read() */
	}
	/* the event runs (index != 0): both times advanced since the update */
	uint64_t delta = pmc_mmap_time_delta(cyc, shift, mult, toff);
	out->count = count;
	out->enabled = enabled + delta;
	out->running = running + delta;
	return 0;
}

#if defined(__x86_64__) || defined(__i386__)
static uint64_t x86_rdpmc(void *ctx, uint32_t counter)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t x86_rdtsc(void *ctx)
{
	(void)ctx;
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#define HAVE_USER_READ 1
static const struct pmc_mmap_ops user_ops = {x86_rdpmc, x86_rdtsc, NULL};
#elif defined(__aarch64__)
/* Arm: the page's index - 1 is the counter; 31 is the cycle counter, the
 * others are read by selecting them (PMSELR_EL0, which EL0 may write once
 * the kernel granted user access) then reading PMXEVCNTR_EL0.  Time comes
 * from the generic timer, as the page's time fields expect. */
static uint64_t arm_rdpmc(void *ctx, uint32_t counter)
{
	(void)ctx;
	uint64_t v;
	if (counter == 31) {
		__asm__ volatile("mrs %0, pmccntr_el0" : "=r"(v));
		return v;
	}
	__asm__ volatile("msr pmselr_el0, %1\n\tisb\n\tmrs %0, pmxevcntr_el0" : "=r"(v) : "r"((uint64_t)counter));
	return v;
}

static uint64_t arm_cntvct(void *ctx)
{
	(void)ctx;
	uint64_t v;
	__asm__ volatile("isb\n\tmrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#define HAVE_USER_READ 1
static const struct pmc_mmap_ops user_ops = {arm_rdpmc, arm_cntvct, NULL};
#endif

int pmc_rdpmc_read(const void *page, struct pmc_mmap_value *out)
{
#ifdef HAVE_USER_READ
	return pmc_mmap_read_ops(page, &user_ops, out);
#else
	(void)page;
	(void)out;
	return -EOPNOTSUPP;
#endif
}

int pmc_group_map(struct pmc_group *g, const struct pmc_target *t, char *why, size_t len)
{
	g->mapped = 0;
#ifndef HAVE_USER_READ
	(void)t;
	snprintf(why, len, "unavailable: no user-space counter read on this architecture; this build reads with read()");
	return 0;
#else
	if (!pmc_have_cpu_pmu()) {
		snprintf(why, len, "unavailable: no hardware PMU is exposed on this machine (%s has no cpu PMU), "
			 "and rdpmc reads hardware counters only", SYSFS_PMUS);
		return 0;
	}
	if (t->pid != 0 || t->ncpus > 0 || t->inherit) {
		snprintf(why, len, "unavailable: rdpmc reads the calling thread's own counters only "
			 "(this group counts %s)", t->ncpus > 0 ? "cpus" : t->inherit ? "children too" : "another task");
		return 0;
	}
	long psz = sysconf(_SC_PAGESIZE);
	int any = 0;
	for (int s = 0; s < g->nsub; s++) {
		struct pmc_sub *sb = &g->sub[s];
		if (!g->ev[sb->ev[0]].needs_cpu_pmu)
			continue;  /* software, msr, uncore: read() */
		for (int k = 0; k < sb->ninst; k++)
			for (int j = 0; j < sb->n; j++) {
				void *p = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, sb->inst[k].fd[j], 0);
				if (p == MAP_FAILED) {
					snprintf(why, len, "unavailable: mmap of the perf page failed (%s)", strerror(errno));
					goto undo;
				}
				sb->inst[k].page[j] = p;
				const struct perf_event_mmap_page *pc = p;
				if (!pc->cap_user_rdpmc || !pc->cap_user_time) {
					char mode[16] = "?";
#if defined(__aarch64__)
					read_text("/proc/sys/kernel/perf_user_access", mode, sizeof mode);
					snprintf(why, len, "unavailable: the kernel does not allow user-space counter reads for %s "
						 "(cap_user_rdpmc=%d, cap_user_time=%d, kernel.perf_user_access=%s; 1 allows it)",
						 g->ev[sb->ev[j]].name, (int)pc->cap_user_rdpmc, (int)pc->cap_user_time, mode);
					goto undo;
#endif
					read_text(SYSFS_PMUS "/cpu/rdpmc", mode, sizeof mode);
					snprintf(why, len, "unavailable: the kernel does not allow user-space rdpmc for %s "
						 "(cap_user_rdpmc=%d, cap_user_time=%d, %s/cpu/rdpmc=%s; 2 allows it "
						 "everywhere)", g->ev[sb->ev[j]].name, (int)pc->cap_user_rdpmc,
						 (int)pc->cap_user_time, SYSFS_PMUS, mode);
					goto undo;
				}
				any = 1;
			}
	}
	if (!any) {
		snprintf(why, len, "unavailable: no hardware event in this group (rdpmc reads hardware counters only)");
		return 0;
	}
	g->mapped = 1;
	return 1;
undo:
	for (int s = 0; s < g->nsub; s++)
		for (int k = 0; k < g->sub[s].ninst; k++)
			for (int j = 0; j < g->sub[s].n; j++)
				if (g->sub[s].inst[k].page[j]) {
					munmap(g->sub[s].inst[k].page[j], (size_t)psz);
					g->sub[s].inst[k].page[j] = NULL;
				}
	return 0;
#endif
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
		if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || !pmu_usable(p, &pi))
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
	}
	if (pmc_pfm_forced())
		return 0;  /* another model: this machine's sysfs PMUs do not apply */
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
			if (read_text(path, body, sizeof body) < 0)
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

int pmc_try_open(const struct pmc_event *ev)
{
	if (pmc_pfm_forced() && ev->source == PMC_SRC_PFM && strcmp(ev->pmu, "perf"))
		return 0;
	struct perf_event_attr a = ev->attr;
	a.size = sizeof a;
	a.disabled = 1;
	pid_t pid = ev->ncpumask ? -1 : 0;
	int cpu = ev->ncpumask ? ev->cpumask[0] : -1;
	long fd = sys_perf_event_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		a.exclude_kernel = a.exclude_hv = 1;
		fd = sys_perf_event_open(&a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
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
	    pfm_get_pmu_info(info.pmu, &pinfo) != PFM_SUCCESS || !pmu_usable(info.pmu, &pinfo))
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
