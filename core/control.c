/* perf stat's control channel (see control.h).  Pure C. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "control.h"
#include "safepath.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>


int pmc_control_fifo(const char *path, char *why, size_t len)
{
	int fd = safe_open(path, O_RDWR | O_NONBLOCK, 0, 1, why, len);
	if (fd < 0 && !strcmp(why, path))  /* safe_open named the path alone: add why */
		snprintf(why, len, "%s: %s", path, strerror(-fd));
	if (fd < 0)
		return fd;
	struct stat st;
	int e = 0;
	if (fstat(fd, &st) < 0) {
		e = errno;
		snprintf(why, len, "%s: %s", path, strerror(e));
	} else if (!S_ISFIFO(st.st_mode)) {
		e = EINVAL;
		snprintf(why, len, "%s is not a FIFO (make one with mkfifo)", path);
	} else if (st.st_uid != geteuid() && st.st_uid != 0) {
		e = EPERM;
		snprintf(why, len, "%s: a FIFO of another user's: pmcsh takes commands from none and answers none", path);
	}
	if (e) {
		close(fd);
		return -e;
	}
	return fd;
}

int pmc_control_fd(int fd, char *why, size_t len)
{
	if (fd >= 0 && fcntl(fd, F_GETFD) >= 0)
		return 0;
	snprintf(why, len, "fd %d is not open (fd:CTL,ACK names descriptors pmcsh inherits)", fd);
	return -EBADF;
}

static void note(struct pmc_control *c, char what)
{
	if (c->nlog >= PMC_CONTROL_LOG_MAX) {
		c->dropped++;
		return;
	}
	if (c->nlog == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		char *log = realloc(c->log, cap);
		if (!log)
			return;  /* the switch is made; only its line is lost */
		c->log = log;
		c->cap = cap;
	}
	c->log[c->nlog++] = what;
}

void pmc_control_switch(struct pmc_control *c, int on)
{
	if (c->set)
		c->set(c->ctx, on);
	note(c, on ? 'E' : 'D');
}

/* perf's answer: the tag with its NUL.  A reader gone from an fd: pipe
 * (EPIPE) ends the answers, and the SIGPIPE it raised, blocked while the
 * command runs (child.c), is taken back so it is not passed on. */
static void ack(struct pmc_control *c)
{
	static const char tag[] = "ack\n";
	if (c->ack < 0)
		return;
	ssize_t w;
	do
		w = write(c->ack, tag, sizeof tag);
	while (w < 0 && errno == EINTR);
	if (w < 0 && errno == EPIPE) {
		sigset_t pipe_set;
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		struct timespec now = {0, 0};
		sigtimedwait(&pipe_set, NULL, &now);
		c->ack = -1;
	}
}

/* What follows a command's tag: 0 nothing, 1 " ARG", -1 anything else
 * (perf's get_cmd_arg). */
static int arg_of(const char *rest, const char **arg)
{
	if (!*rest)
		return 0;
	if (*rest != ' ')
		return -1;
	*arg = rest + 1;
	return 1;
}

enum { C_ENABLE, C_DISABLE, C_SNAPSHOT, C_EVLIST, C_STOP, C_PING, C_NONE };

/* Does one command line, cmd (n bytes, a string). */
static void command(struct pmc_control *c, const char *cmd, size_t n)
{
	static const char *const tags[] = {"enable", "disable", "snapshot", "evlist", "stop", "ping"};
	if (!n)
		return;
	int kind = C_NONE;
	for (int k = 0; k < C_NONE && kind == C_NONE; k++)  /* perf: the tag as a prefix, in this order */
		if (!strncmp(cmd, tags[k], strlen(tags[k])))
			kind = k;
	const char *arg = NULL;
	int has = kind == C_NONE ? 0 : arg_of(cmd + strlen(tags[kind]), &arg);
	switch (kind) {
	case C_ENABLE:
	case C_DISABLE:
		if (has < 0)
			note(c, 'W');
		else if (has)
			note(c, 'N');
		else
			pmc_control_switch(c, kind == C_ENABLE);
		break;
	case C_EVLIST:  /* perf lists its events on stderr; answered only */
		if (has < 0 || (has && strcmp(arg, "-v") && strcmp(arg, "-g") && strcmp(arg, "-F")))
			note(c, 'W');
		break;
	default:
		break;
	}
	if (kind != C_NONE && kind != C_SNAPSHOT)  /* perf answers neither these nor what it does not know */
		ack(c);
}


/* Whether c->ctl has more to read now. */
static int readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

int pmc_control_process(struct pmc_control *c)
{
	int end = 0, did = 0;
	/* one read of what is there, never more (FIONREAD): an fd: channel
	 * may be a blocking pipe, where perf's read would wait for the rest
	 * of a line; where the size is not told, a byte */
	size_t room = PMC_CONTROL_CMD_MAX - 1 - c->npend;
	int avail = 0;
	if (ioctl(c->ctl, FIONREAD, &avail) < 0 || avail <= 0)
		avail = 1;
	ssize_t r;
	do
		r = readable(c->ctl) ? read(c->ctl, c->pend + c->npend, (size_t)avail < room ? (size_t)avail : room) : -2;
	while (r == -1 && errno == EINTR);
	/* readable yet nothing read: end of file (/dev/null, a file, a pipe's
	 * writers gone) or an fd not open for reading */
	end = r == 0 || (r == -1 && errno != EAGAIN);
	if (r > 0)
		c->npend += (size_t)r;
	did = r > 0;
	/* each whole line; then 63 bytes as one (perf reads the rest as the
	 * next), or what is there when nothing more is */
	for (;;) {
		size_t n = 0;
		while (n < c->npend && c->pend[n] != '\n' && c->pend[n] != '\0')
			n++;
		size_t used = n < c->npend ? n + 1 : n;
		if (n == c->npend && n < PMC_CONTROL_CMD_MAX - 1 && (!n || (!end && readable(c->ctl))))
			break;  /* the rest of the line is coming */
		char line[PMC_CONTROL_CMD_MAX];
		memcpy(line, c->pend, n);
		line[n] = '\0';
		command(c, line, n);
		did = 1;
		c->npend -= used;
		memmove(c->pend, c->pend + used, c->npend);
	}
	return end ? -1 : did;
}

void pmc_control_close(struct pmc_control *c)
{
	if ((c->owned & 1) && c->ctl >= 0)
		close(c->ctl);
	if ((c->owned & 2) && c->ack >= 0)
		close(c->ack);
	c->owned = 0;
	c->ctl = c->ack = -1;
	free(c->log);
	c->log = NULL;
	c->nlog = c->cap = c->dropped = 0;
	c->npend = 0;
}
