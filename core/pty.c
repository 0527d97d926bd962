#include "pty.h"

#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

int pty_spawn(char *const argv[], char *const envp[], pid_t *pid, int *fd)
{
	struct winsize ws = {.ws_row = 24, .ws_col = 120};
	int master;
	pid_t p = forkpty(&master, NULL, NULL, &ws);
	if (p < 0)
		return -errno;
	if (p == 0) {
		if (envp)
			execvpe(argv[0], argv, envp);
		else
			execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);  /* the shell's statuses: not found, not runnable */
	}
	*pid = p;
	*fd = master;
	return 0;
}

ssize_t pty_read(int fd, char *buf, size_t len, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int r = poll(&pfd, 1, timeout_ms);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	ssize_t n = read(fd, buf, len);
	if (n < 0)
		return -errno;
	return n == 0 ? -EIO : n;
}

int pty_write(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int pty_wait(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}
