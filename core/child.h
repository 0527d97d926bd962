/* A counted command (pmc.run): forked and held before exec on a pipe until
 * its counters are opened on it, then let go and waited for, Ctrl-C and
 * SIGTERM passed on to it as perf stat does; or, with no command, a count
 * that lasts until a watched process ends or a signal (perf stat -a/-p).
 * Every other signal that would end pmcsh (HUP, QUIT, TERM, PIPE, XCPU,
 * real-time ones, ...) and USR1/USR2 are passed on to the command as they
 * come; ALRM is held, as perf stat holds it, until the command ends.
 * Ticks every interval (perf stat -I) through a callback.  Pure C: never
 * prints, never exits (the child alone calls _exit). */
#ifndef PMCSH_CHILD_H
#define PMCSH_CHILD_H
#include <stddef.h>
#include <sys/types.h>
#include <sys/resource.h>
#include "control.h"

struct pmc_child {
	pid_t pid;  /* 0: no command */
	int go;     /* write end: one byte lets the child exec */
	int ex;     /* read end: the child's errno when exec failed */
};

struct pmc_child_wait_opts {
	pid_t until_pid;  /* no command: the count ends when this process does (0: at a signal only) */
	long interval_ms; /* > 0, with tick: tick(ctx, seconds since exec) every interval */
	long interval_count; /* > 0: that many ticks only (perf stat --interval-count); without a command the count then ends */
	int (*tick)(void *ctx, double seconds);  /* nonzero: stop (the command gets SIGTERM) */
	void *ctx;
	struct pmc_control *control;  /* perf stat -D and --control: its delay and channel, or NULL */
};

struct pmc_child_status {
	int status;       /* as wait4 gives it */
	int exit_code;    /* the shell's $?: the exit status, or 128 + the signal; -1 without a command */
	int term_signal;  /* the signal that ended the command, 0 if none */
	int forwarded;    /* the signal passed on to the command (or that ended a count without one), 0 if none */
	int interrupted;  /* Ctrl-C was pressed: the flag is cleared, the caller drops its own reaction */
	int exec_errno;   /* > 0: the command could not be run (exit_code: 127 when not found, else 126) */
	int tick_failed;  /* a tick asked to stop */
	struct rusage ru; /* the command's, its waited-for children included */
	double elapsed_ns;/* from the exec (perf's span), not from the fork; with a delay, from its end (perf's) */
};

/* Forks argv[0], held before exec (the child waits on c->go), with the
 * environment envp (NULL: pmcsh's own).  Returns 0, or -errno with msg
 * filled. */
int pmc_child_spawn(struct pmc_child *c, char *const argv[], char *const envp[], char *msg, size_t len);
/* Gives the held child up (it exits 127 without running) and reaps it. */
void pmc_child_abandon(struct pmc_child *c);
/* Lets the child exec (c->pid 0: there is none) and waits for it, or for
 * o->until_pid, or for a signal.  Ctrl-C (the interrupt flag) is forwarded
 * to the command once; the other signals that would end pmcsh, and USR1
 * and USR2, as they come (st->forwarded names the last but USR1/USR2);
 * ALRM reaches only pmcsh: the command runs on.  Without a command any of
 * them ends the count.  With o->control, its commands are done as they
 * come, and its delay ends while the command runs.  o may be NULL. */
void pmc_child_wait(struct pmc_child *c, const struct pmc_child_wait_opts *o, struct pmc_child_status *st);

#endif
