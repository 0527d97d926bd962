/* A guest's crash said before it takes pmcsh down: while armed, SIGSEGV,
 * SIGBUS, SIGFPE and SIGILL print one line naming the guest, the signal and
 * the note, then end the process by that signal as it would have ended
 * (results already written stay written: every record is flushed as it
 * is made).  Lua-free, async-signal-safe in the handler. */
#ifndef PMCSH_GUARD_H
#define PMCSH_GUARD_H

/* What the program is doing now, for the crash line (the survey's run and
 * the --resume that continues it); "" clears it.  Copied. */
void guard_note(const char *note);
/* Arms the guard for `who` ("the loop f of k.so"); calls nest. */
void guard_arm(const char *who);
void guard_disarm(void);

#endif
