/* The counted command's protocol (see child.h).  Pure C: never prints,
 * never exits but in the child. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "child.h"
#include "../kernels/clock.h"
#include "../kernels/interrupt.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* SIGTERM while a counted command runs: forwarded to it (pmc_child_wait). */
static volatile sig_atomic_t run_signal;
static void on_run_signal(int sig)
{
	run_signal = sig;
}

int pmc_child_spawn(struct pmc_child *c, char *const argv[], char *msg, size_t len)
{
	int go[2], ex[2];
	if (pipe2(go, O_CLOEXEC) < 0) {
		int e = errno;
		snprintf(msg, len, "pipe failed");
		return -e;
	}
	if (pipe2(ex, O_CLOEXEC) < 0) {
		int e = errno;
		close(go[0]); close(go[1]);
		snprintf(msg, len, "pipe failed");
		return -e;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]); close(go[1]); close(ex[0]); close(ex[1]);
		snprintf(msg, len, "fork failed");
		return -e;
	}
	if (pid == 0) {
		char ch;
		close(go[1]);
		close(ex[0]);
		signal(SIGINT, SIG_DFL);
		if (read(go[0], &ch, 1) != 1)
			_exit(127);  /* the parent gave up */
		execvp(argv[0], argv);
		int e = errno;
		if (write(ex[1], &e, sizeof e) < 0)
			_exit(126);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	c->pid = pid;
	c->go = go[1];
	c->ex = ex[0];
	return 0;
}

void pmc_child_abandon(struct pmc_child *c)
{
	close(c->go);
	close(c->ex);
	waitpid(c->pid, NULL, 0);
}

/* The signal that reached us while waiting, if any: SIGTERM, or SIGINT
 * for Ctrl-C (the interrupt flag). */
static int pending_signal(void)
{
	return run_signal ? (int)run_signal : pmcsh_interrupted ? SIGINT : 0;
}

/* Polls the pidfd of the process whose end ends the count (none: only a
 * signal ends it), with the interval ticks as its timeout. */
static void watch(struct pmc_child *c, const struct pmc_child_wait_opts *o, pid_t watched, double t0,
		  struct pmc_child_status *st)
{
	int pfd = watched > 0 ? (int)syscall(SYS_pidfd_open, watched, 0) : -1;
	if (watched > 0 && pfd < 0)
		return;  /* gone already, or no pidfd: wait4 alone */
	int ticking = o && o->interval_ms > 0 && o->tick;
	double next = t0 + (double)(ticking ? o->interval_ms : 0) * 1e6;
	for (;;) {
		int timeout = -1;
		if (ticking) {
			double left = (next - mono_ns()) / 1e6;
			timeout = left > 0 ? (int)left + 1 : 0;
		}
		struct pollfd p = {.fd = pfd, .events = POLLIN};
		int k = poll(&p, pfd >= 0 ? 1 : 0, timeout);
		if (k > 0)
			break;  /* the watched process ended */
		if (k == 0) {
			if (o->tick(o->ctx, (mono_ns() - t0) / 1e9)) {
				st->tick_failed = 1;
				break;
			}
			next += (double)o->interval_ms * 1e6;  /* the count of ticks, not each one's drift */
			continue;
		}
		if (errno != EINTR)
			break;
		int sig = pending_signal();
		if (sig && !c->pid) {
			st->forwarded = sig;
			break;
		}
		if (sig && !st->forwarded) {
			kill(c->pid, sig);
			st->forwarded = sig;
		}
	}
	if (pfd >= 0)
		close(pfd);
}

void pmc_child_wait(struct pmc_child *c, const struct pmc_child_wait_opts *o, struct pmc_child_status *st)
{
	memset(st, 0, sizeof *st);
	int child_errno = 0;
	ssize_t got = 0;
	/* perf stat's span: from releasing the command (its exec and loader
	 * included) to its end.  Timed from the exec seen here instead, a
	 * parent woken late (an idle vCPU) measured 20 us for a 1.4 ms ls. */
	double t0 = mono_ns();
	if (c->pid) {
		ssize_t w = write(c->go, "g", 1);
		close(c->go);
		/* end of file on ex: the exec closed it, the command runs */
		got = w == 1 ? read(c->ex, &child_errno, sizeof child_errno) : 0;
		close(c->ex);
	}
	/* as perf stat: Ctrl-C or SIGTERM while the command runs goes to the
	 * command too, and its counts are still reported */
	struct sigaction sa, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_run_signal;
	sigemptyset(&sa.sa_mask);
	run_signal = 0;
	sigaction(SIGTERM, &sa, &old_term);
	if (got == (ssize_t)sizeof child_errno)
		st->exec_errno = child_errno;  /* exit_code as env(1) and the shell give it, below */
	else if (c->pid || (o && o->until_pid >= 0))
		watch(c, o, c->pid ? c->pid : (o ? o->until_pid : 0), t0, st);
	if (st->tick_failed && c->pid)
		kill(c->pid, SIGTERM);
	while (c->pid && wait4(c->pid, &st->status, 0, &st->ru) < 0) {
		if (errno != EINTR)
			break;
		int sig = pending_signal();
		if (sig && !st->forwarded) {
			kill(c->pid, sig);
			st->forwarded = sig;
		}
	}
	st->elapsed_ns = mono_ns() - t0;
	st->exit_code = -1;
	if (c->pid && WIFEXITED(st->status))
		st->exit_code = WEXITSTATUS(st->status);
	else if (c->pid && WIFSIGNALED(st->status)) {
		st->term_signal = WTERMSIG(st->status);
		st->exit_code = 128 + st->term_signal;
	}
	if (st->exec_errno)  /* not found: 127; found but not runnable (EACCES, ENOEXEC, ...): 126 */
		st->exit_code = st->exec_errno == ENOENT ? 127 : 126;
	sigaction(SIGTERM, &old_term, NULL);
	if (pmcsh_interrupted) {  /* handled here: the caller drops its own reaction */
		st->interrupted = 1;
		pmcsh_interrupted = 0;
		if (!st->forwarded)
			st->forwarded = SIGINT;
	}
}
