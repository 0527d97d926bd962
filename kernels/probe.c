/* The calibration work of probe.h: the loops in asm so that no compiler can
 * change what they retire. */
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "probe.h"
#include "clock.h"
#include "interrupt.h"

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

const char *const probe_kinds[] = {"touch", "read", "spin", "sleep", "empty", "loop", "syscalls", NULL};

static volatile uint64_t probe_sink;

void probe_work(const struct probe_args *a)
{
	switch (a->kind) {
	case PROBE_TOUCH:
		for (size_t i = 0; i < a->bytes; i += a->page)
			((volatile char *)a->buf)[i] = 1;
		break;
	case PROBE_READ:
		for (size_t done = 0; done < a->bytes;) {
			ssize_t n = read(a->fd, a->buf + done, a->bytes - done);
			if (n <= 0)
				break;
			done += (size_t)n;
		}
		break;
	case PROBE_SPIN: {
		double end = mono_ns() + (double)a->arg;
		uint64_t x = 0;
		while (mono_ns() < end && !pmcsh_stop_requested())
			for (int i = 0; i < 1000; i++)
				x = x * 6364136223846793005ULL + 1;
		probe_sink = x;
		break;
	}
	case PROBE_SLEEP: {
		struct timespec ts = {(time_t)(a->arg / 1000000000), (long)(a->arg % 1000000000)};
		while (nanosleep(&ts, &ts) && errno == EINTR && !pmcsh_stop_requested())
			;
		break;
	}
	case PROBE_LOOP:
		probe_loop(a->arg);
		break;
	case PROBE_SYSCALLS:
		probe_syscalls(a->arg);
		break;
	default:
		break;
	}
}
