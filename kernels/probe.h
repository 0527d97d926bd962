/* Calibration work whose effect is known by construction, for the specs and
 * the privilege checks: what a loop retires is read off its asm, a first
 * touch takes one fault per page.  Pure C. */
#ifndef PMCSH_PROBE_H
#define PMCSH_PROBE_H
#include <stddef.h>
#include <stdint.h>

/* Instructions one iteration of probe_loop retires: a decrement and a
 * conditional branch back (x86-64: dec, jnz; aarch64: subs, b.ne). */
#define PROBE_LOOP_INSNS 2

/* n iterations (n >= 1) of the two-instruction loop. */
void probe_loop(uint64_t n);
/* n getppid system calls: cheap, constant work on both sides of the split. */
void probe_syscalls(uint64_t n);

/* The probe kinds, in the order of probe_kinds[]. */
enum probe_kind { PROBE_TOUCH, PROBE_READ, PROBE_SPIN, PROBE_SLEEP, PROBE_EMPTY, PROBE_LOOP, PROBE_SYSCALLS };
/* Their names, NULL-terminated (a luaL_checkoption list). */
extern const char *const probe_kinds[];

struct probe_args {
	int kind;      /* enum probe_kind */
	uint64_t arg;  /* touch, read: bytes; spin, sleep: ns; loop, syscalls: iterations */
	char *buf;     /* touch, read: a fresh mapping of `bytes` */
	size_t bytes;
	size_t page;   /* touch: the page size */
	int fd;        /* read: the file read from */
};

/* The measured work of one probe: touch writes one byte per page of buf,
 * read read()s `bytes` of fd into buf, spin busy-loops and sleep sleeps arg
 * ns, loop and syscalls as above, empty nothing.  Every kind stops within
 * milliseconds of Ctrl-C (pmcsh_stop_requested); the caller checks the
 * flag after. */
void probe_work(const struct probe_args *a);

#endif
