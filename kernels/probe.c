/* The calibration loops of probe.h, in asm so that no compiler can change
 * what they retire. */
#include <sys/syscall.h>
#include <unistd.h>
#include "probe.h"

void probe_loop(uint64_t n)
{
	if (n == 0)
		return;
#if defined(__x86_64__)
	__asm__ __volatile__("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#elif defined(__aarch64__)
	__asm__ __volatile__("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#else
	for (volatile uint64_t i = n; i; i--)
		;
#endif
}

void probe_syscalls(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		syscall(SYS_getppid);
}
