/* The interrupt flag: set by the host's SIGINT handler, polled by C engines
 * between repetitions (never inside a measured loop). Pure C, no Lua. */
#ifndef PMCSH_INTERRUPT_H
#define PMCSH_INTERRUPT_H
#include <signal.h>

extern volatile sig_atomic_t pmcsh_interrupted;

/* True once Ctrl-C was pressed; an engine that sees it stops and returns -EINTR. */
static inline int pmcsh_stop_requested(void) { return pmcsh_interrupted != 0; }

#endif
