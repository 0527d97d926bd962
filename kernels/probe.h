/* Calibration loops whose instruction counts are known by construction, for
 * the hardware-counter specs: what a loop retires is read off its asm. */
#ifndef PMCSH_PROBE_H
#define PMCSH_PROBE_H
#include <stdint.h>

/* Instructions one iteration of probe_loop retires: a decrement and a
 * conditional branch back (x86-64: dec, jnz; aarch64: subs, b.ne). */
#define PROBE_LOOP_INSNS 2

/* n iterations (n >= 1) of the two-instruction loop. */
void probe_loop(uint64_t n);
/* n getppid system calls: cheap, constant work on both sides of the split. */
void probe_syscalls(uint64_t n);

#endif
