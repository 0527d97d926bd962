/* The machine's perf files (see sysfs.h, counter.h): the PMUs under
 * /sys/bus/event_source/devices and their pmu/terms/ grammar, format and
 * event files, perf_event_paranoid, cpu topology.  Pure C: never prints,
 * never exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "counter.h"
#include "evmods.h"
#include "sysfs.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- small file helpers ------------------------------------------------- */

int pmc_read_text(const char *path, char *buf, size_t len)
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
	if (pmc_read_text("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) <= 0)
		return -100;
	return atoi(buf);
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

/* s[0..n) for a message: quoted, at most 40 bytes of it, every byte but
 * printable ASCII as \xNN, so that no byte of it reaches a terminal. */
static void quote_item(char *out, size_t len, const char *s, size_t n)
{
	size_t o = 0;
	if (len < 8) {
		if (len)
			out[0] = 0;
		return;
	}
	out[o++] = '\'';
	for (size_t i = 0; i < n && o + 8 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (i == 40) {
			o += (size_t)snprintf(out + o, len - o, "...");
			break;
		}
		if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
	}
	snprintf(out + o, len - o, "'");
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

/* A decimal number at s[*i..n): its value, capped at max + 1 (no
 * overflow); -1 when no digit is there, -2 for a leading zero in words. */
static long read_number(const char *s, size_t n, size_t *i, long max, int words)
{
	size_t from = *i;
	long v = 0;
	while (*i < n && s[*i] >= '0' && s[*i] <= '9') {
		int d = s[*i] - '0';
		v = v > (max - d) / 10 ? max + 1 : v * 10 + d;
		(*i)++;
	}
	if (*i == from)
		return -1;
	if (words && s[from] == '0' && *i - from > 1)
		return -2;
	return v;
}

/* One item of a list, s[0..n): "5" or "0-7" (spaces around it allowed
 * unless ru->words).  0 with *r set, or -EINVAL with why. */
static int parse_range(const char *s, size_t n, const struct pmc_list_rules *ru, struct pmc_range *r, char *why,
		       size_t wlen)
{
	const char *item = s;
	size_t len = n, i = 0;
	if (!ru->words) {
		while (len > 0 && is_blank(item[0]))
			item++, len--;
		while (len > 0 && is_blank(item[len - 1]))
			len--;
	}
	char q[200];
	quote_item(q, sizeof q, item, len);
	if (len == 0) {
		snprintf(why, wlen, "an empty item");
		return -EINVAL;
	}
	long a = read_number(item, len, &i, ru->max, ru->words), b = a;
	if (a >= 0 && i < len && item[i] == '-') {
		i++;
		b = read_number(item, len, &i, ru->max, ru->words);
		if (b >= 0 && i == len && ru->single) {
			snprintf(why, wlen, "%s is a range", q);
			return -EINVAL;
		}
	}
	if (a == -2 || b == -2) {
		snprintf(why, wlen, "%s has a leading zero", q);
		return -EINVAL;
	}
	if (a < 0 || b < 0 || i != len) {
		snprintf(why, wlen, "%s is not a decimal %s", q, ru->single ? "number" : "number or range N-M");
		return -EINVAL;
	}
	if (a > b) {
		snprintf(why, wlen, "%s ends below its start", q);
		return -EINVAL;
	}
	if (b > ru->max || a < ru->min) {
		snprintf(why, wlen, "%s is outside %ld to %ld", q, ru->min, ru->max);
		return -EINVAL;
	}
	r->lo = (int)a;
	r->hi = (int)b;
	return 0;
}

int pmc_parse_list(const char *s, size_t n, const struct pmc_list_rules *ru, struct pmc_range *r, int cap, char *why,
		   size_t wlen)
{
	char spare[1];
	if (!why || !wlen)
		why = spare, wlen = sizeof spare;
	why[0] = 0;
	size_t blank = 0;
	while (!ru->words && blank < n && is_blank(s[blank]))
		blank++;
	if (blank == n) {
		snprintf(why, wlen, "an empty list");
		return -EINVAL;
	}
	int count = 0;
	for (size_t from = 0;;) {
		size_t to = from;
		while (to < n && s[to] != ',')
			to++;
		if (count == cap) {
			snprintf(why, wlen, "more than %d items", cap);
			return -E2BIG;
		}
		int e = parse_range(s + from, to - from, ru, &r[count], why, wlen);
		if (e)
			return e;
		count++;
		if (to == n)
			return count;
		from = to + 1;
	}
}

/* Places `val` into the bits that format file `fmt` ("config:0-7,32-35")
 * names, in the field it names. */
static int apply_format(const char *pmu, const char *term, uint64_t val, struct perf_event_attr *a,
			char *msg, size_t len)
{
	char path[512], fmt[256];
	snprintf(path, sizeof path, SYSFS_PMUS "/%s/format/%s", pmu, term);
	if (pmc_read_text(path, fmt, sizeof fmt) < 0) {
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
	const char *bits = colon + 1;
	struct pmc_range rg[64];
	static const struct pmc_list_rules bit_rules = {.min = 0, .max = 63};
	int nranges = pmc_parse_list(bits, strlen(bits), &bit_rules, rg, 64, NULL, 0), width = 0;
	uint64_t given = val;
	if (nranges < 0)
		goto bad;
	for (int k = 0; k < nranges; k++) {
		for (int b = rg[k].lo; b <= rg[k].hi; b++) {
			if (val & 1)
				*field |= 1ULL << b;
			val >>= 1;
		}
		width += rg[k].hi - rg[k].lo + 1;
	}
	if (nranges && val) {   /* perf refuses it too: cut to fit, it would count another event */
		snprintf(msg, len, "value %#llx of term %s does not fit its %d bits (PMU %s: %s:%s)",
			 (unsigned long long)given, term, width, pmu, fmt, bits);
		return -EINVAL;
	}
	if (nranges)
		return 0;
bad:
	snprintf(msg, len, "format %s of PMU %s reads '%s:%s': bits are N or N-M, from 0 to 63", term, pmu, fmt, bits);
	return -EINVAL;
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
		uint64_t val = 1;  /* a bare format term is a flag: cpu/edge/ */
		if (eq)
			*eq = 0;
		if (!strcmp(t, "name")) {  /* perf's display name: text, never a count */
			if (!eq || !eq[1]) {
				snprintf(msg, len, "term 'name' of %s needs a value (%s/...,name=TEXT/)", pmu, pmu);
				return -EINVAL;
			}
			continue;
		}
		if (eq) {
			/* a number as perf reads it: decimal, 0x hex or 0 octal, never
			 * empty and never signed (strtoull would take "" as 0 and
			 * "-1" as all ones) */
			char *end;
			errno = 0;
			if (isdigit((unsigned char)eq[1]))
				val = strtoull(eq + 1, &end, 0);
			if (!isdigit((unsigned char)eq[1]) || errno || *end) {
				snprintf(msg, len, "bad value '%.64s' for term '%.64s' of %s: %s", eq + 1, t, pmu,
					 eq[1] ? "give a number (decimal or 0x hex), not negative" : "the value is missing");
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
		char path[512], body[512];
		snprintf(path, sizeof path, SYSFS_PMUS "/%s/format/%s", pmu, t);
		if (access(path, R_OK) == 0) {
			int r = apply_format(pmu, t, val, &ev->attr, msg, len);
			if (r)
				return r;
			continue;
		}
		snprintf(path, sizeof path, SYSFS_PMUS "/%s/events/%s", pmu, t);
		if (!eq && depth == 0 && pmc_read_text(path, body, sizeof body) >= 0) {
			int r = apply_terms(pmu, body, ev, 1, msg, len);
			if (r)
				return r;
			char extra[64];
			snprintf(path, sizeof path, SYSFS_PMUS "/%s/events/%s.scale", pmu, t);
			if (pmc_read_text(path, extra, sizeof extra) > 0) {
				char *end;
				ev->scale = strtod(extra, &end);
				if (*end || !isfinite(ev->scale) || ev->scale <= 0) {
					snprintf(msg, len, "event %s of PMU %s has scale '%s', not a positive number", t,
						 pmu, extra);
					return -EINVAL;
				}
			}
			snprintf(path, sizeof path, SYSFS_PMUS "/%s/events/%s.unit", pmu, t);
			if (pmc_read_text(path, extra, sizeof extra) > 0)
				snprintf(ev->unit, sizeof ev->unit, "%.31s", extra);
			continue;
		}
		snprintf(msg, len, "PMU %s has no event or term '%s' (see %s/%s/events/ and format/)", pmu, t,
			 SYSFS_PMUS, pmu);
		return -ENOENT;
	}
	return 0;
}

/* The cpus an uncore PMU counts on ("0,18" or "0-1"), the first 8. */
static int read_cpumask(const char *pmu, struct pmc_event *ev, char *msg, size_t len)
{
	char path[512], buf[256];
	snprintf(path, sizeof path, SYSFS_PMUS "/%s/cpumask", pmu);
	ev->ncpumask = 0;
	if (pmc_read_text(path, buf, sizeof buf) <= 0)
		return 0;
	struct pmc_range rg[128];
	static const struct pmc_list_rules cpu_rules = {.min = 0, .max = INT_MAX - 1};
	int n = pmc_parse_list(buf, strlen(buf), &cpu_rules, rg, 128, NULL, 0);
	if (n < 0) {
		snprintf(msg, len, "cpumask of PMU %s reads '%s', not a list of cpus (0,18 or 0-3)", pmu, buf);
		return -EINVAL;
	}
	for (int k = 0; k < n; k++)
		for (int c = rg[k].lo; c <= rg[k].hi && ev->ncpumask < 8; c++)
			ev->cpumask[ev->ncpumask++] = c;
	return 0;
}

/* "pmu/terms/" with modifiers ":u" or directly after the slash ("/u"). */
int pmc_resolve_sysfs(const char *name, struct pmc_event *ev, char *msg, size_t len)
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
		snprintf(msg, len, "bad modifier '%s' in '%s' (u, k, h, G, H, p, pp, ppp, P)", mods, name);
		return -EINVAL;
	}
	char path[512], tbuf[32];
	snprintf(path, sizeof path, SYSFS_PMUS "/%s/type", pmu);
	if (pmc_read_text(path, tbuf, sizeof tbuf) <= 0) {
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
	if ((r = read_cpumask(pmu, ev, msg, len)))
		return r;
	snprintf(ev->canon, sizeof ev->canon, "%.63s/%.170s/%.8s", pmu, s1 + 1, mods);
	ev->source = PMC_SRC_SYSFS;
	return 0;
}

/* ---- tracepoints: tracefs's events/SUBSYS/EVENT/id ---------------------- */

/* Where tracefs is mounted, as perf looks: its own mount, then debugfs's. */
const char *pmc_tracefs(void)
{
	static const char *const dirs[] = {TRACEFS_DIRS, NULL};
	for (int i = 0; dirs[i]; i++) {
		char path[256];
		snprintf(path, sizeof path, "%s/events", dirs[i]);
		if (access(path, R_OK | X_OK) == 0)
			return dirs[i];
	}
	return NULL;
}

/* A tracefs folder's name: what the kernel names subsystems and events. */
static int trace_name_ok(const char *s, size_t n)
{
	return n > 0 && n < 128 && s[0] != '.' && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						       "0123456789_-.") >= n;
}

int pmc_resolve_tracepoint(const char *base, const char *mods, struct pmc_event *ev, char *msg, size_t len)
{
	const char *c = strchr(base, ':');
	if (!c || strchr(c + 1, ':') || !trace_name_ok(base, (size_t)(c - base)) || !trace_name_ok(c + 1, strlen(c + 1)))
		return -ENOENT;
	const char *dir = pmc_tracefs();
	if (!dir)
		return -ENOENT;
	char path[512], id[32];
	snprintf(path, sizeof path, "%s/events/%.*s/%s/id", dir, (int)(c - base), base, c + 1);
	char *end;
	if (pmc_read_text(path, id, sizeof id) <= 0)
		return -ENOENT;
	unsigned long long v = strtoull(id, &end, 10);
	if (*end) {
		snprintf(msg, len, "tracepoint %s: %s holds '%.20s', not a number", base, path, id);
		return -EINVAL;
	}
	ev->attr.type = PERF_TYPE_TRACEPOINT;
	ev->attr.config = v;
	parse_mods(mods, &ev->attr);
	snprintf(ev->pmu, sizeof ev->pmu, "tracepoint");
	snprintf(ev->canon, sizeof ev->canon, "%s%s%s", base, *mods ? ":" : "", mods);
	ev->source = PMC_SRC_TRACEPOINT;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of the folders in path, sorted (malloc'd; *n of them), or NULL. */
static char **folder_names(const char *path, int *n)
{
	*n = 0;
	DIR *d = opendir(path);
	if (!d)
		return NULL;
	char **v = NULL;
	int cap = 0;
	for (struct dirent *de; (de = readdir(d));) {
		if (de->d_type != DT_DIR || !trace_name_ok(de->d_name, strlen(de->d_name)))
			continue;
		if (*n == cap) {
			char **w = realloc(v, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *v);
			if (!w)
				break;
			v = w;
		}
		if (!(v[*n] = strdup(de->d_name)))
			break;
		++*n;
	}
	closedir(d);
	if (v)
		qsort(v, (size_t)*n, sizeof *v, by_name);
	return v;
}

static void free_names(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int pmc_list_tracepoints(pmc_list_fn fn, void *ctx)
{
	const char *dir = pmc_tracefs();
	if (!dir)
		return 0;
	char path[512], name[PMC_NAME_MAX];
	snprintf(path, sizeof path, "%s/events", dir);
	int ns, r = 0;
	char **subs = folder_names(path, &ns);
	for (int i = 0; i < ns && !r; i++) {
		int ne;
		snprintf(path, sizeof path, "%s/events/%s", dir, subs[i]);
		char **evs = folder_names(path, &ne);
		for (int j = 0; j < ne && !r; j++) {
			snprintf(name, sizeof name, "%s:%s", subs[i], evs[j]);
			struct pmc_listed e = {name, "tracepoint", "Tracepoint event", -1};
			r = fn(ctx, &e);
		}
		free_names(evs, ne);
	}
	free_names(subs, ns);
	return r;
}
