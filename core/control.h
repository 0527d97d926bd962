/* perf stat's control of a counted command (perf stat -D MS and --control
 * fifo:CTL[,ACK] | fd:CTL[,ACK], perf 6.1's evlist__ctlfd_*): counting
 * starts after a delay or at an `enable` line on the control channel, and
 * `enable`, `disable` switch it; `ping`, `stop` and `evlist` are answered
 * and change nothing (perf stat's own `stop` does nothing either).  Each
 * command perf answers gets perf's answer on ACK: "ack\n" and the NUL after
 * it (perf writes sizeof "ack\n").  Pure C: never prints, never exits. */
#ifndef PMCSH_CONTROL_H
#define PMCSH_CONTROL_H
#include <stddef.h>

#define PMC_CONTROL_CMD_MAX 64  /* perf's EVLIST_CTL_CMD_MAX_LEN, its NUL included */

struct pmc_control {
	int delay_ms;  /* > 0: counting starts this long after the exec; -1: at the first `enable`; 0: at the exec */
	int ctl, ack;  /* the channel, -1: none */
	int owned;     /* 1: ctl, 2: ack was opened by pmc_control_fifo (pmc_control_close closes it) */
	int (*set)(void *ctx, int on);  /* switches every counter on (1) or off (0): ioctls, nothing else */
	void *ctx;
	/* what the commands did, a byte each in order: 'E' enabled, 'D'
	 * disabled, 'W' a malformed command (perf: "failed: wrong command"),
	 * 'N' `enable NAME`/`disable NAME` (one event: not switched here) */
	char *log;
	size_t nlog, cap;
	size_t dropped;  /* commands past PMC_CONTROL_LOG_MAX, done but not logged */
	char pend[PMC_CONTROL_CMD_MAX];  /* read, not yet done: part of a line whose rest is there */
	size_t npend;
};

/* The log keeps this many commands: a writer that never pauses fills no memory. */
#define PMC_CONTROL_LOG_MAX 4096

/* Opens the FIFO at path as perf does (O_RDWR | O_NONBLOCK: never waits
 * for a writer, never sees a hangup), links followed as safepath.h's
 * safe_open follows them.  Anything but a FIFO of this user's or root's is
 * refused (EINVAL, EPERM).  The fd, or -errno with why. */
int pmc_control_fifo(const char *path, char *why, size_t len);
/* 0 when fd is open (fd:CTL,ACK: inherited), or -EBADF with why. */
int pmc_control_fd(int fd, char *why, size_t len);
/* Reads what c->ctl holds now, at most 63 bytes, and does each command
 * line in it (up to '\n' or '\0', 63 bytes, or what is there when
 * nothing more is).  Returns 1 when it read or did something, 0 when not, -1 at
 * end of file or on a read error (the channel says no more: stop
 * listening). */
int pmc_control_process(struct pmc_control *c);
/* Switches the counters (the delay's end): c->set, logged. */
void pmc_control_switch(struct pmc_control *c, int on);
/* Closes what pmc_control_fifo opened and frees the log. */
void pmc_control_close(struct pmc_control *c);

#endif
