/* libFuzzer harness: a list of numbers (core/sysfs.c's pmc_parse_list) read
 * as each of its callers reads one: a cpumask or a format file's bits as
 * sysfs writes them, a cpu list a user typed (stat -C), process ids a user
 * typed (stat -p, -t).  The input is the list's bytes, NUL and all, with
 * no terminator after them.  Beyond crashes and sanitizer reports, a
 * finding is an outcome the callers do not expect: see the checks below. */
#include "../../core/counter.h"
#include "../../core/sysfs.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP 64

static const struct pmc_list_rules rules[] = {
	{.min = 0, .max = 63},                                 /* a format file's bits */
	{.min = 0, .max = 65535},                              /* a cpumask, machine.parse_list */
	{.min = 0, .max = 65535, .words = 1},                  /* stat -C */
	{.min = 1, .max = 2147483647, .words = 1, .single = 1},   /* stat -p, -t */
};

static int blank(uint8_t c) { return c == ' ' || c == '\t' || c == '\n'; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes: a read past the list is ASan's to see */
	char *s = malloc(size ? size : 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	for (size_t k = 0; k < sizeof rules / sizeof rules[0]; k++) {
		const struct pmc_list_rules *ru = &rules[k];
		struct pmc_range r[CAP];
		char why[PMC_ERR_MAX];
		int n = pmc_parse_list(s, size, ru, r, CAP, why, sizeof why);
		if (n == 0 || (n < 0 && n != -EINVAL && n != -E2BIG))
			abort();   /* how many, or the two failures sysfs.h promises */
		if (n < 0) {
			if (!why[0] || strlen(why) >= sizeof why - 1)
				abort();   /* every refusal says why, whole */
			for (const char *w = why; *w; w++)
				if ((unsigned char)*w < 0x20 || (unsigned char)*w >= 0x7f)
					abort();   /* the item quoted inert */
			continue;
		}
		size_t from = 0;
		for (int i = 0; i < n; i++) {
			if (r[i].lo < ru->min || r[i].lo > r[i].hi || r[i].hi > ru->max || (ru->single && r[i].lo != r[i].hi))
				abort();   /* each range within the rules */
			size_t to = from;
			while (to < size && s[to] != ',')
				to++;
			if (ru->words) {   /* a user's item is its numbers written back, byte for byte */
				char one[24], two[24];
				int l1 = snprintf(one, sizeof one, "%d", r[i].lo);
				int l2 = snprintf(two, sizeof two, "%d-%d", r[i].lo, r[i].hi);
				int same = ((size_t)l1 == to - from && r[i].lo == r[i].hi && !memcmp(one, s + from, (size_t)l1)) ||
					   ((size_t)l2 == to - from && !memcmp(two, s + from, (size_t)l2));
				if (!same)
					abort();
			}
			if ((i + 1 < n) != (to < size))
				abort();   /* one range per item, every item read */
			from = to + 1;
		}
		for (size_t i = 0; !ru->words && i < size; i++)
			if (!(data[i] >= '0' && data[i] <= '9') && data[i] != '-' && data[i] != ',' && !blank(data[i]))
				abort();   /* nothing but numbers, dashes, commas and blanks */
	}
	free(s);
	return 0;
}
