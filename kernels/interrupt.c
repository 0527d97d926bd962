#include "interrupt.h"

volatile sig_atomic_t pmcsh_interrupted;
volatile sig_atomic_t pmcsh_interrupt_served;
volatile sig_atomic_t pmcsh_interrupt_seen;
