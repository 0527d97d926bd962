/* A child process on a pseudo-terminal, for driving the REPL as a person
 * would (specs).  Pure C. */
#ifndef PMCSH_PTY_H
#define PMCSH_PTY_H
#include <stddef.h>
#include <sys/types.h>

/* Starts argv[0] (PATH searched) on a new pty with envp (NULL: inherit).
 * Returns 0 and fills *pid, *fd, or -errno. */
int pty_spawn(char *const argv[], char *const envp[], pid_t *pid, int *fd);

/* Reads what is available within timeout_ms: bytes read, 0 on timeout,
 * -EIO once the child side is closed, or -errno. */
ssize_t pty_read(int fd, char *buf, size_t len, int timeout_ms);

/* Writes all of buf; 0 or -errno. */
int pty_write(int fd, const char *buf, size_t len);

/* Waits for pid; returns its exit status, 128+signal if killed, or -errno. */
int pty_wait(pid_t pid);

#endif
