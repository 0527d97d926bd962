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

/* Iterations of probe_loop between looks at the interrupt flag: about
 * 20 ms at one iteration per cycle, for a few instructions more per chunk
 * (6e-8 of the loop's). */
#define LOOP_CHUNK (1ull << 26)
/* Pages touched, bytes read, calls made between looks: milliseconds. */
#define PAGE_CHUNK 4096
#define READ_CHUNK (64u << 20)
#define CALL_CHUNK 4096

const char *const probe_kinds[] = {"touch", "read", "spin", "sleep", "empty", "loop", "syscalls", NULL};

static volatile uint64_t probe_sink;

void probe_work(const struct probe_args *a)
{
	switch (a->kind) {
	case PROBE_TOUCH:
		for (size_t i = 0, k = 0; i < a->bytes; i += a->page) {
			((volatile char *)a->buf)[i] = 1;
			if (++k % PAGE_CHUNK == 0 && pmcsh_stop_requested())
				break;
		}
		break;
	case PROBE_READ:
		for (size_t done = 0; done < a->bytes && !pmcsh_stop_requested();) {
			size_t want = a->bytes - done < READ_CHUNK ? a->bytes - done : READ_CHUNK;
			ssize_t n = read(a->fd, a->buf + done, want);
			if (n < 0 && errno == EINTR)
				continue;
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
		for (uint64_t left = a->arg; left && !pmcsh_stop_requested();) {
			uint64_t n = left < LOOP_CHUNK ? left : LOOP_CHUNK;
			probe_loop(n);
			left -= n;
		}
		break;
	case PROBE_SYSCALLS:
		for (uint64_t left = a->arg; left && !pmcsh_stop_requested();) {
			uint64_t n = left < CALL_CHUNK ? left : CALL_CHUNK;
			probe_syscalls(n);
			left -= n;
		}
		break;
	default:
		break;
	}
}
