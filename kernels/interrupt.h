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

/* True once Ctrl-C was pressed and not yet served; an engine that sees it
 * stops and returns -EINTR. */
static inline int pmcsh_stop_requested(void) { return pmcsh_interrupted != 0 && !pmcsh_interrupt_served; }

#endif
