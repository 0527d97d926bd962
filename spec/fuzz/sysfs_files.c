/* libFuzzer harness: the contents of a PMU's sysfs files, as a kernel (or a
 * bind mount) could write them.  The input's lines are, in order, format/f
 * ("config:0-7,32-35"), events/e ("event=0x3c,f=0x1"), cpumask ("0-1"),
 * events/e.scale and events/e.unit of the PMU "fuzzed" in the fake tree
 * (spec/fuzz/sysfs, copied by make fuzz to where these objects read it);
 * then the event and the format term are resolved as users name them.  A
 * missing line (after the first) leaves its file absent. */
#include "../../core/counter.h"
#include "../../core/sysfs.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const files[] = {"format/f", "events/e", "cpumask", "events/e.scale", "events/e.unit"};
#define NFILES (sizeof files / sizeof files[0])

static void put(const char *file, const uint8_t *s, size_t n, int present)
{
	char path[512];
	snprintf(path, sizeof path, SYSFS_PMUS "/fuzzed/%s", file);
	unlink(path);
	if (!present)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, s, n) != (ssize_t)n)
		abort();   /* the fake tree is missing: run through make fuzz */
	close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mkdir(SYSFS_PMUS "/fuzzed/format", 0755);
	mkdir(SYSFS_PMUS "/fuzzed/events", 0755);
	return 0;
}

static const char *const names[] = {
	"fuzzed/e/", "fuzzed/e/u", "fuzzed/f=0x5a5a5a5a5a5a5a5a/", "fuzzed/f/:k", "fuzzed/e,f=3/",
	"fuzzed/config=1,f=0xffffffffffffffff/",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	for (size_t i = 0; i < NFILES; i++) {
		const uint8_t *nl = p < end ? memchr(p, '\n', (size_t)(end - p)) : NULL;
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		put(files[i], p, n, i == 0 || p < end);
		p = nl ? nl + 1 : end;
	}
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct pmc_event ev;
		char msg[PMC_ERR_MAX];
		int r = pmc_resolve(names[i], &ev, msg, sizeof msg);
		if (r != 0 && r != -ENOENT && r != -EINVAL)
			abort();
		if (r != 0 && !msg[0])
			abort();
		if (r == 0 && (ev.attr.type != 77 || ev.ncpumask < 0 || ev.ncpumask > 8))
			abort();
		if (r == 0 && !(isfinite(ev.scale) && ev.scale > 0))
			abort();   /* every reading is scaled by it */
		for (int c = 0; r == 0 && c < ev.ncpumask; c++)
			if (ev.cpumask[c] < 0)
				abort();   /* a cpu to open on */
	}
	return 0;
}
