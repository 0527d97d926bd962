#include "interrupt.h"

volatile sig_atomic_t pmcsh_interrupted;
