/* What uread.h does not inline: whether the kernel grants user reads.
 * Pure C, no other pmcsh file: the marker library links it too. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "uread.h"
#include <fcntl.h>
#include <unistd.h>

uint64_t pmc_user_read_config1(void)
{
#if defined(__aarch64__)
	/* read at each open: an administrator may switch it while pmcsh runs */
	char c = 0;
	int fd = open("/proc/sys/kernel/perf_user_access", O_RDONLY | O_CLOEXEC);
	int g = fd >= 0 && read(fd, &c, 1) == 1 && c == '1';
	if (fd >= 0)
		close(fd);
	return g ? 2 : 0;
#else
	return 0;
#endif
}
