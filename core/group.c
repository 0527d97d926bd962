/* Perf groups (see counter.h): events laid out by PMU, opened on a target,
 * enabled and disabled through their leaders, read into snapshots and
 * deltas with the multiplex arithmetic.  Pure C: never prints, never
 * exits. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "counter.h"
#include "evmods.h"
#include "sysfs.h"
#include "machine.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* perf_event_open with perf's fallbacks for what its modifiers implied
 * (evsel.c): :P lowers precise_ip a level at a time, then the
 * exclude_guest that p set by itself goes, as perf drops it where the PMU
 * refuses it (msr/tsc/p). */
static long open_fallback(struct perf_event_attr *a, const struct pmc_event *ev, pid_t pid, int cpu, int group_fd)
{
	for (;;) {
		long fd = sys_perf_event_open(a, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0 || (errno != EINVAL && errno != EOPNOTSUPP))
			return fd;
		if (ev->precise_max && a->precise_ip > 0)
			a->precise_ip--;
		else if (ev->precise_guest && a->exclude_guest)
			a->exclude_guest = 0;
		else
			return fd;
	}
}

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
			in->socket = in->cpu >= 0 ? machine_socket(NULL, in->cpu) : -1;
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
				/* user reads are granted per event, to a task's own counters only */
				if (g->ev[sb->ev[j]].needs_cpu_pmu && t->pid == 0 && t->ncpus == 0 && !t->inherit)
					a.config1 |= pmc_user_read_config1();
				long fd = open_fallback(&a, &g->ev[sb->ev[j]], in->pid, in->cpu, j ? in->fd[0] : -1);
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

void pmc_group_sched(const struct pmc_group *g, const struct pmc_count *c, struct pmc_sched *out)
{
	*out = (struct pmc_sched){0, 0, 0};
	double least = 2;
	for (int s = 0; s < g->nsub; s++) {
		if (g->sub[s].n < 1)
			continue;
		const struct pmc_count *x = &c[g->sub[s].ev[0]];
		double share = x->enabled ? (double)x->running / (double)x->enabled : 1;
		if (share < least) {
			least = share;
			out->enabled = x->enabled;
			out->running = x->running;
		}
	}
	for (int i = 0; i < g->nev; i++)
		out->multiplexed |= c[i].multiplexed;
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

int pmc_try_open(const struct pmc_event *ev)
{
	if (pmc_pfm_forced() && ev->source == PMC_SRC_PFM && strcmp(ev->pmu, "perf"))
		return 0;
	struct perf_event_attr a = ev->attr;
	a.size = sizeof a;
	a.disabled = 1;
	pid_t pid = ev->ncpumask ? -1 : 0;
	int cpu = ev->ncpumask ? ev->cpumask[0] : -1;
	long fd = open_fallback(&a, ev, pid, cpu, -1);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		a.exclude_kernel = a.exclude_hv = 1;
		fd = open_fallback(&a, ev, pid, cpu, -1);
	}
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
}

/* ---- why an open failed -------------------------------------------------- */

/* Whether capability `bit` is in this process's effective set
 * (/proc/self/status CapEff, hex). */
static int cap_effective(int bit)
{
	char buf[4096];
	if (pmc_read_text("/proc/self/status", buf, sizeof buf) <= 0)
		return 0;
	const char *at = strstr(buf, "CapEff:");
	return at && (strtoull(at + 7, NULL, 16) >> bit & 1);
}
enum { CAP_SYS_PTRACE_BIT = 19, CAP_SYS_ADMIN_BIT = 21, CAP_PERFMON_BIT = 38 };

/* Whether this kernel lets this process count its own user space: the
 * check of what paranoid 3 and above mean here (upstream treats them as
 * 2; Debian's patch refuses unprivileged perf_event_open at 3). */
static int user_counting_opens(void)
{
	struct perf_event_attr a = {.type = PERF_TYPE_SOFTWARE, .size = sizeof a, .config = PERF_COUNT_SW_DUMMY,
				    .disabled = 1, .exclude_kernel = 1, .exclude_hv = 1};
	long fd = sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	close((int)fd);
	return 1;
}

/* EACCES or EPERM: the kernel's own checks, in its order, each said only
 * where it applies here (kernel/events/core.c): a task of another user
 * needs ptrace read rights over it; at paranoid > 1 counting the kernel,
 * at > 0 counting whole cpus, need CAP_PERFMON; Debian's patch refuses
 * everything unprivileged at 3.  None of them: a security module or
 * seccomp said no. */
static void denied_msg(const struct pmc_event *ev, const struct pmc_target *t, char *msg, size_t len)
{
	int p = pmc_paranoid();
	int priv = cap_effective(CAP_PERFMON_BIT) || cap_effective(CAP_SYS_ADMIN_BIT);
	int cpu_wide = ev->ncpumask > 0 || (t && t->ncpus > 0);
	char base[PMC_NAME_MAX];
	snprintf(base, sizeof base, "%s", ev->name);
	char *c = strrchr(base, ':');
	if (c && c > base && c[-1] != ':' && is_modstr(c + 1))
		*c = 0;
	int n = snprintf(msg, len, "permission denied opening %s", ev->name), why = 0;
#define SAY(...) do { if ((size_t)n < len) n += snprintf(msg + n, len - n, __VA_ARGS__); } while (0)
	if (t && t->pid > 0 && !cpu_wide && !cap_effective(CAP_SYS_PTRACE_BIT)) {
		char path[64];
		struct stat st;
		snprintf(path, sizeof path, "/proc/%d", (int)t->pid);
		if (stat(path, &st) == 0 && st.st_uid != geteuid()) {
			SAY(" on process %d: it belongs to uid %u and you are uid %u; counting another user's process "
			    "needs the right to trace it (the same uid, or CAP_SYS_PTRACE: root)",
			    (int)t->pid, (unsigned)st.st_uid, (unsigned)geteuid());
			why++;
		}
	}
	if (!priv && p >= 3 && !user_counting_opens()) {
		SAY("%skernel.perf_event_paranoid is %d, which this kernel enforces as no perf_event_open at all "
		    "without privileges (Debian's setting): run as root, or sysctl kernel.perf_event_paranoid=2 for "
		    "counting your own processes' user space", why++ ? "; and " : ": ", p);
	} else if (!priv && p > -100) {
		char level[64];
		snprintf(level, sizeof level, p >= 3 ? "%d (which this kernel treats as 2)" : "%d", p);
		if (p > 1 && !ev->attr.exclude_kernel) {
			SAY("%skernel.perf_event_paranoid is %s, which allows counting the kernel only with CAP_PERFMON: "
			    "count user space only (%s:u), or run as root / with CAP_PERFMON, or sysctl "
			    "kernel.perf_event_paranoid=1 for kernel counting", why++ ? "; and " : ": ", level, base);
		}
		if (p > 0 && cpu_wide) {
			SAY("%skernel.perf_event_paranoid is %s, which allows counting whole cpus only with CAP_PERFMON: "
			    "run as root / with CAP_PERFMON, or sysctl kernel.perf_event_paranoid=0 for cpu-wide counting",
			    why++ ? "; and " : ": ", level);
		}
	}
	if (!why)
		SAY(": kernel.perf_event_paranoid (%d)%s allows this, so a security module (SELinux, AppArmor) or "
		    "a seccomp filter refuses perf_event_open here", p, priv ? " and your privileges" : "");
#undef SAY
}

void pmc_open_strerror(const struct pmc_event *ev, const struct pmc_target *t, int err, char *msg, size_t len)
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
	case EPERM:
		denied_msg(ev, t, msg, len);
		return;
	case EMFILE:
	case ENFILE: {
		struct rlimit rl;
		getrlimit(RLIMIT_NOFILE, &rl);
		snprintf(msg, len, "too many open files opening %s: each event holds one descriptor (limit %llu); "
			 "close groups you no longer need (g:close()) or raise the limit (ulimit -n)", ev->name,
			 (unsigned long long)rl.rlim_cur);
		return;
	}
	case EINVAL:
	case EOPNOTSUPP:
		if (ev->attr.precise_ip && !ev->precise_max) {
			/* perf: "'precise' request may not be supported" */
			snprintf(msg, len, "cannot count %s: the %s PMU refuses precise_ip %u (its :%.*s modifier; %s); "
				 "leave the p out, or write :P for the highest level it takes", ev->name, ev->pmu,
				 ev->attr.precise_ip, (int)ev->attr.precise_ip, "ppp", strerror(err));
			return;
		}
		if (err == EINVAL)
			break;
		/* fall through */
	case ENOENT:
	case ENODEV:
		snprintf(msg, len, "cannot count %s on this machine: the %s PMU does not support it (%s)", ev->name,
			 ev->pmu, strerror(err));
		return;
	case ESRCH:
		snprintf(msg, len, "cannot count %s: no such process", ev->name);
		return;
	}
	snprintf(msg, len, "cannot open %s (%s): %s", ev->name, ev->canon, strerror(err));
}
