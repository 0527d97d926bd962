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
#include <time.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a signal that reaches pmcsh while a counted command runs does.
 * Every one that would end pmcsh is caught, so that the command is never
 * left running uncounted and the counts are printed (perf stat dies of
 * SIGTERM, SIGHUP or SIGPIPE and leaves its command behind).  Ctrl-C is
 * the host's (the interrupt flag: sent once, the terminal sends it to the
 * command too).  pmcsh's own faults (SEGV, BUS, FPE, ILL, TRAP, ABRT, SYS)
 * are left alone. */
enum {
	PASS_NONE,
	PASS_END,   /* passed on as it comes; the command decides by how it ends */
	PASS_ONLY,  /* USR1, USR2: passed on, ends nothing (dd prints its progress) */
	HOLD,       /* ALRM, as perf stat's skip_signal: the command runs on, its
		     * count printed when it ends; it ends a count without one */
};

static int sig_kind(int sig)
{
	switch (sig) {
	case SIGHUP: case SIGQUIT: case SIGTERM: case SIGPIPE: case SIGVTALRM: case SIGPROF:
	case SIGXCPU: case SIGXFSZ: case SIGIO: case SIGPWR:
#ifdef SIGSTKFLT
	case SIGSTKFLT:
#endif
		return PASS_END;
	case SIGUSR1: case SIGUSR2:
		return PASS_ONLY;
	case SIGALRM:
		return HOLD;
	}
	return sig >= SIGRTMIN && sig <= SIGRTMAX ? PASS_END : PASS_NONE;  /* the C library's own below SIGRTMIN */
}

static volatile sig_atomic_t arrived[NSIG];

/* Reads of the channel after the watched process ended, at most: what was
 * written before it ended is there, a writer that never stops is not
 * waited for. */
#define CONTROL_DRAIN 4096

static void on_run_signal(int sig)
{
	arrived[sig] = 1;
}

int pmc_child_spawn(struct pmc_child *c, char *const argv[], char *const envp[], char *msg, size_t len)
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
		if (envp)
			execvpe(argv[0], argv, envp);
		else
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

/* Passes the signals that arrived since the last call to the command
 * (alive: not yet reaped, so c->pid is still its pid), and notes in
 * st->forwarded one that ends the count.  Returns 1 when the count without
 * a command must end. */
static int pass_signals(struct pmc_child *c, int alive, int *int_sent, struct pmc_child_status *st)
{
	int end = 0;
	for (int sig = 1; sig < NSIG; sig++) {
		if (!arrived[sig])
			continue;
		arrived[sig] = 0;
		int kind = sig_kind(sig);
		if (c->pid && alive && kind != HOLD)
			kill(c->pid, sig);
		if (!c->pid || kind == PASS_END)
			st->forwarded = sig;
		end |= !c->pid;
	}
	if (pmcsh_interrupted && !*int_sent) {
		*int_sent = 1;
		if (c->pid && alive)
			kill(c->pid, SIGINT);
		st->forwarded = SIGINT;
		end |= !c->pid;
	}
	return end;
}

/* The time left until wake (mono_ns) in *ts, or NULL where nothing is
 * awaited (wake < 0): ppoll's timeout. */
static struct timespec *until(double wake, struct timespec *ts)
{
	if (wake < 0)
		return NULL;
	double left = wake - mono_ns();
	if (left < 0)
		left = 0;
	ts->tv_sec = (time_t)(left / 1e9);
	ts->tv_nsec = (long)(left - (double)ts->tv_sec * 1e9);
	return ts;
}

/* Polls the pidfd of the process whose end ends the count (none: only a
 * signal ends it), and the control channel, with the next interval tick
 * or the delay's end as its timeout.  A control command is done before
 * the end is seen, so a `disable` written just before exiting counts. */
static void watch(struct pmc_child *c, const struct pmc_child_wait_opts *o, pid_t watched, double t0,
		  const sigset_t *open_mask, int *int_sent, struct pmc_child_status *st)
{
	int pfd = watched > 0 ? (int)syscall(SYS_pidfd_open, watched, 0) : -1;
	if (watched > 0 && pfd < 0)
		return;  /* gone already, or no pidfd: wait4 alone */
	int ticking = o && o->interval_ms > 0 && o->tick;
	long ticks = 0;
	double next = t0 + (double)(ticking ? o->interval_ms : 0) * 1e6;
	struct pmc_control *ctl = o ? o->control : NULL;
	int delaying = ctl && ctl->delay_ms > 0;
	double start = t0 + (delaying ? ctl->delay_ms : 0) * 1e6;
	int listening = ctl && ctl->ctl >= 0;
	for (;;) {
		struct timespec ts;
		double wake = ticking ? next : -1;
		if (delaying && (wake < 0 || start < wake))
			wake = start;
		struct timespec *timeout = until(wake, &ts);
		struct pollfd p[2];
		int np = 0, cp = -1;
		if (pfd >= 0)
			p[np++] = (struct pollfd){.fd = pfd, .events = POLLIN};
		if (listening) {
			cp = np;
			p[np++] = (struct pollfd){.fd = ctl->ctl, .events = POLLIN};
		}
		/* the passed-on signals are blocked but here: none is lost
		 * between a check and the wait */
		int k = ppoll(p, (nfds_t)np, timeout, open_mask);
		if (k < 0 && errno != EINTR)
			break;
		int ended = 0;
		if (k > 0) {
			/* ppoll lets no signal in when a channel is ready at once
			 * (a writer that never pauses): they are let in here */
			sigset_t held;
			sigprocmask(SIG_SETMASK, open_mask, &held);
			sigprocmask(SIG_SETMASK, &held, NULL);
			ended = pfd >= 0 && p[0].revents;
		}
		if (k > 0 && cp >= 0 && p[cp].revents) {
			/* one read a turn, so the end and the signals are seen
			 * every turn; at the end, what is there already (a
			 * `disable` written just before exiting), bounded */
			int more = 1, r = 0;
			for (int i = 0; more && i < (ended ? CONTROL_DRAIN : 1); i++)
				more = (r = (p[cp].revents & POLLIN) ? pmc_control_process(ctl) : -1) > 0;
			if (r < 0)
				listening = 0;  /* end of file, an error or a hangup: perf stops listening */
		}
		if (pass_signals(c, 1, int_sent, st) || ended)
			break;  /* a count without a command ended by a signal, or the watched process ended */
		double now = mono_ns();
		if (delaying && now >= start) {
			delaying = 0;
			pmc_control_switch(ctl, 1);
		}
		if (ticking && now >= next) {
			if (o->tick(o->ctx, (now - t0) / 1e9)) {
				st->tick_failed = 1;
				break;
			}
			next += (double)o->interval_ms * 1e6;  /* the count of ticks, not each one's drift */
			if (o->interval_count > 0 && ++ticks >= o->interval_count) {
				if (!c->pid)
					break;  /* perf's: the count ends; a command is waited for */
				ticking = 0;
			}
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
	/* the signals are caught before the command is let go, and blocked
	 * outside the waits; one ignored when the count began stays ignored */
	struct sigaction sa, old_act[NSIG];
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_run_signal;
	sigemptyset(&sa.sa_mask);
	sigset_t block, open_mask;
	sigemptyset(&block);
	for (int sig = 1; sig < NSIG; sig++) {
		arrived[sig] = 0;
		if (sig_kind(sig))
			sigaddset(&block, sig);
	}
	sigprocmask(SIG_BLOCK, &block, &open_mask);
	unsigned char caught[NSIG] = {0};
	for (int sig = 1; sig < NSIG; sig++)
		if (sig_kind(sig) && sigaction(sig, NULL, &old_act[sig]) == 0 && old_act[sig].sa_handler != SIG_IGN)
			caught[sig] = sigaction(sig, &sa, NULL) == 0;
	int int_sent = 0;
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
	if (got == (ssize_t)sizeof child_errno)
		st->exec_errno = child_errno;  /* exit_code as env(1) and the shell give it, below */
	else if (c->pid || (o && o->until_pid >= 0))
		watch(c, o, c->pid ? c->pid : (o ? o->until_pid : 0), t0, &open_mask, &int_sent, st);
	if (st->tick_failed && c->pid)
		kill(c->pid, SIGTERM);
	/* the command ended (or there is no pidfd): signals open again, so a
	 * wait4 that still waits is interrupted and passes them on */
	sigprocmask(SIG_SETMASK, &open_mask, NULL);
	int reaped = 0;
	while (c->pid && !reaped) {
		if (wait4(c->pid, &st->status, 0, &st->ru) >= 0)
			reaped = 1;
		else if (errno != EINTR)
			break;
		pass_signals(c, !reaped, &int_sent, st);
	}
	pass_signals(c, 0, &int_sent, st);  /* what came last: noted, the command is gone */
	for (int sig = 1; sig < NSIG; sig++)
		if (caught[sig])
			sigaction(sig, &old_act[sig], NULL);
	/* perf stat -D MS times from the delay's end (its t0 follows the
	 * usleep); a command gone before it counted nothing for no time */
	double from = t0;
	if (o && o->control && o->control->delay_ms > 0)
		from += o->control->delay_ms * 1e6;
	st->elapsed_ns = mono_ns() - from;
	if (st->elapsed_ns < 0)
		st->elapsed_ns = 0;
	st->exit_code = -1;
	if (c->pid && WIFEXITED(st->status))
		st->exit_code = WEXITSTATUS(st->status);
	else if (c->pid && WIFSIGNALED(st->status)) {
		st->term_signal = WTERMSIG(st->status);
		st->exit_code = 128 + st->term_signal;
	}
	if (st->exec_errno)  /* not found: 127; found but not runnable (EACCES, ENOEXEC, ...): 126 */
		st->exit_code = st->exec_errno == ENOENT ? 127 : 126;
	if (pmcsh_interrupted) {  /* handled here: the caller drops its own reaction */
		st->interrupted = 1;
		pmcsh_interrupted = 0;
		if (!st->forwarded)
			st->forwarded = SIGINT;
	}
}
