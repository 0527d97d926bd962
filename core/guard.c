/* A guest's crash said before it takes pmcsh down (core/guard.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "guard.h"
#include "../kernels/interrupt.h"

static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIGS (int)(sizeof sigs / sizeof sigs[0])
static struct sigaction saved[NSIGS], saved_int;
static char who_buf[512], note_buf[1024];
static volatile sig_atomic_t depth, presses;
static int claimed;		/* the first thread to end the process says it; the others wait */
static int exit_hooked;
static char altstack[64 * 1024];

static void say(const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(2, s, n);
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* "pmcsh: WHO EVENT[; NOTE]\n" in one go, by the
 * first thread only: a second thread faulting meanwhile waits for the end. */
static void line(const char *event)
{
	if (__atomic_exchange_n(&claimed, 1, __ATOMIC_SEQ_CST)) {
		for (;;)
			pause();
	}
	say("pmcsh: ");
	say(who_buf);
	say(event);
	if (note_buf[0]) {
		say("; ");
		say(note_buf);
	}
	say("\n");
}

static void on_crash(int sig)
{
	line(sig == SIGSEGV ? " crashed: SIGSEGV (an invalid memory access)" :
	     sig == SIGBUS ? " crashed: SIGBUS (a bad address, or a file shorter than its mapping)" :
	     sig == SIGFPE ? " crashed: SIGFPE (an arithmetic fault)" :
	     sig == SIGABRT ? " aborted: SIGABRT (abort(), or a failed assert)" :
	     " crashed: SIGILL (an instruction this cpu lacks)");
	signal(sig, SIG_DFL);	/* ends as the crash would have: the shell sees the signal */
	raise(sig);
}

/* exit() from the guest (its loop, a thread of it or its constructor):
 * said, and the process ends with the guest's status. */
static void on_exit_call(int status, void *arg)
{
	(void)arg;
	if (depth == 0)
		return;
	char ev[64];
	snprintf(ev, sizeof ev, " called exit(%d)", status);
	line(ev);
}

/* Ctrl-C while the guest has not returned: the first press says which guest
 * and passes the press on (the engine stops when the guest returns); the
 * second ends pmcsh as SIGINT does, with a line. */
static void on_interrupt(int sig)
{
	if (++presses == 1) {
		say("pmcsh: Ctrl-C: ");
		say(who_buf);
		say(" has not returned; Ctrl-C again ends pmcsh");
		if (note_buf[0]) {
			say(" (");
			say(note_buf);
			say(")");
		}
		say("\n");
		if (saved_int.sa_flags & SA_SIGINFO)
			return;		/* no host handler of that kind is installed */
		if (saved_int.sa_handler != SIG_DFL && saved_int.sa_handler != SIG_IGN)
			saved_int.sa_handler(sig);
		else
			pmcsh_interrupted = 1;
		return;
	}
	line(" never returned: ended by a second Ctrl-C");
	signal(sig, SIG_DFL);
	raise(sig);
}

/* fds 0-2 open again (on /dev/null) where the guest closed them, so that
 * pmcsh's own files never take their numbers. */
static void keep_std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int n = open("/dev/null", O_RDWR);
		if (n >= 0 && n != fd) {
			dup2(n, fd);
			close(n);
		}
	}
}

void guard_note(const char *note)
{
	snprintf(note_buf, sizeof note_buf, "%s", note ? note : "");
}

void guard_arm(const char *who)
{
	if (depth++ > 0)
		return;
	snprintf(who_buf, sizeof who_buf, "%s", who);
	presses = 0;
	if (!exit_hooked)
		exit_hooked = on_exit(on_exit_call, NULL) == 0;
	stack_t st = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&st, NULL);	/* a loop that overflows its stack is said too (on this thread) */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < NSIGS; i++)
		sigaction(sigs[i], &sa, &saved[i]);
	sa.sa_handler = on_interrupt;
	sa.sa_flags = 0;
	sigaction(SIGINT, &sa, &saved_int);
}

void guard_disarm(void)
{
	if (depth == 0 || --depth > 0)
		return;
	for (int i = 0; i < NSIGS; i++)
		sigaction(sigs[i], &saved[i], NULL);
	sigaction(SIGINT, &saved_int, NULL);
	keep_std_fds();
}
