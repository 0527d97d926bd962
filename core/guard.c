/* A guest's crash said before it takes pmcsh down (core/guard.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "guard.h"

static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#define NSIGS (int)(sizeof sigs / sizeof sigs[0])
static struct sigaction saved[NSIGS];
static char who_buf[512], note_buf[1024];
static volatile sig_atomic_t depth;
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

static void on_crash(int sig)
{
	say("pmcsh: ");
	say(who_buf);
	say(" crashed: ");
	say(sig == SIGSEGV ? "SIGSEGV (an invalid memory access)" : sig == SIGBUS ? "SIGBUS (a bad address)" :
	    sig == SIGFPE ? "SIGFPE (an arithmetic fault)" : "SIGILL (an instruction this cpu lacks)");
	if (note_buf[0]) {
		say("; ");
		say(note_buf);
	}
	say("\n");
	signal(sig, SIG_DFL);	/* ends as the crash would have: the shell sees the signal */
	raise(sig);
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
	stack_t st = {.ss_sp = altstack, .ss_size = sizeof altstack};
	sigaltstack(&st, NULL);	/* a loop that overflows its stack is said too (on this thread) */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_ONSTACK | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < NSIGS; i++)
		sigaction(sigs[i], &sa, &saved[i]);
}

void guard_disarm(void)
{
	if (depth == 0 || --depth > 0)
		return;
	for (int i = 0; i < NSIGS; i++)
		sigaction(sigs[i], &saved[i], NULL);
}
