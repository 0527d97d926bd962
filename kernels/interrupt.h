/* The interrupt flag: set by the host's SIGINT handler, polled by C engines
 * between repetitions (never inside a measured loop). Pure C, no Lua. */
#ifndef PMCSH_INTERRUPT_H
#define PMCSH_INTERRUPT_H
#include <signal.h>

/* Ctrl-C was pressed during this command (the host clears it when one starts). */
extern volatile sig_atomic_t pmcsh_interrupted;
/* The host has served the last press (as Lua's "interrupted!" error, which a
 * pcall may catch): engines called after it run again. */
extern volatile sig_atomic_t pmcsh_interrupt_served;

/* An engine has looked at the flag since the press (the host clears it at
 * each first press): the C call now running stops on its own, so a second
 * press need not end the process. */
extern volatile sig_atomic_t pmcsh_interrupt_seen;

/* True once Ctrl-C was pressed and not yet served; an engine that sees it
 * stops and returns -EINTR.  Writes nothing while no press is pending, so
 * threads polling it share no written line. */
static inline int pmcsh_stop_requested(void)
{
	if (!pmcsh_interrupted)
		return 0;
	pmcsh_interrupt_seen = 1;
	return !pmcsh_interrupt_served;
}

#endif
