/* libFuzzer harness: an event name as a user types it, through the resolver
 * (core/evname.c: libpfm4 names, rNNNN, perf's generic names and modifiers;
 * core/sysfs.c: the pmu/terms/ grammar, read against spec/fuzz/sysfs, the
 * tree make fuzz builds these objects to read), then the message for each
 * way its open could fail.  Beyond crashes and sanitizer reports, a finding
 * is an outcome the callers do not expect: see the checks below. */
#include "../../core/counter.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const int open_errors[] = {EACCES, EPERM, EMFILE, ENOENT, EOPNOTSUPP, ENODEV, ESRCH, EINVAL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[PMC_NAME_MAX + 2], msg[PMC_ERR_MAX];
	if (size >= sizeof name)  /* one past the longest name: its refusal is checked too */
		return 0;
	memcpy(name, data, size);
	name[size] = 0;
	struct pmc_event ev;
	int r = pmc_resolve(name, &ev, msg, sizeof msg);
	if (r != 0 && r != -ENOENT && r != -EINVAL)
		abort();   /* the two failures counter.h promises */
	if (r != 0 && !msg[0])
		abort();   /* every refusal says why */
	if (r == 0 && (!ev.canon[0] || ev.attr.size != sizeof ev.attr || ev.ncpumask < 0 || ev.ncpumask > 8))
		abort();
	for (int i = 0; r == 0 && i < ev.ncpumask; i++)
		if (ev.cpumask[i] < 0)
			abort();   /* a cpu to open on */
	if (r == 0)
		for (size_t i = 0; i < sizeof open_errors / sizeof open_errors[0]; i++) {
			pmc_open_strerror(&ev, NULL, open_errors[i], msg, sizeof msg);
			if (!msg[0])
				abort();
		}
	return 0;
}
