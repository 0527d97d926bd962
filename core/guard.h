/* A guest's end said before it takes pmcsh down: while armed, SIGSEGV,
 * SIGBUS, SIGFPE, SIGILL and SIGABRT print one line naming the guest, the
 * signal and the note, then end the process by that signal as it would have
 * ended; exit() prints the line and ends with the guest's status; the first
 * Ctrl-C says the guest has not returned, the second ends pmcsh with a line
 * (results already written stay written: every record is flushed as it is
 * made).  One line whichever thread ends it first.  Disarming reopens fds
 * 0-2 on /dev/null where the guest closed them.  Lua-free,
 * async-signal-safe in the handlers. */
#ifndef PMCSH_GUARD_H
#define PMCSH_GUARD_H

/* What the program is doing now, for the line (the survey's run and the
 * --resume that continues it); "" clears it.  Copied. */
void guard_note(const char *note);
/* Arms the guard for `who` ("the loop f of k.so", "k.so, while being
 * loaded for the loop f,"); calls nest. */
void guard_arm(const char *who);
void guard_disarm(void);

#endif
