/* The arm64 lab's region program: region "loop-0000K" (six digits) runs K trips of a loop
 * of exactly 4 instructions (inline asm, so no compiler changes it), for K
 * in argv; "pK" is region "pairs-K" holding K empty regions "p"; region
 * "empty" holds nothing.  Under pmcsh stat --regions -e instructions:u
 * each loop region counts K * 4 plus the fixed cost, and pairs-K K times
 * the cost of a pair more than an empty region. */
#include <pmcsh/marker.h>
#include <stdio.h>
#include <stdlib.h>

static void trips(unsigned long k)
{
	unsigned long a = 0;
	__asm__ volatile("cbz %1, 2f\n"
			 "1:\tadd %0, %0, #1\n\t"
			 "add %0, %0, #2\n\t"
			 "subs %1, %1, #1\n\t"
			 "b.ne 1b\n"
			 "2:"
			 : "+r"(a), "+r"(k)
			 :
			 : "cc");
}

int main(int argc, char **argv)
{
	char name[32];
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == 'i') {
			unsigned long k = strtoul(argv[i] + 1, NULL, 10);
			snprintf(name, sizeof name, "iter-%lu", k);
			pmcsh_region_begin(name);
			for (unsigned long j = 0; j < k; j++)
				pmcsh_region_iterations("p", 1);
			pmcsh_region_end(name);
			continue;
		}
		if (argv[i][0] == 'p') {
			unsigned long k = strtoul(argv[i] + 1, NULL, 10);
			snprintf(name, sizeof name, "pairs-%lu", k);
			pmcsh_region_begin(name);
			for (unsigned long j = 0; j < k; j++) {
				pmcsh_region_begin("p");
				pmcsh_region_end("p");
			}
			pmcsh_region_end(name);
			continue;
		}
		unsigned long k = strtoul(argv[i], NULL, 10);
		snprintf(name, sizeof name, "loop-%06lu", k);
		pmcsh_region_begin(name);
		trips(k);
		pmcsh_region_end(name);
	}
	pmcsh_region_begin("empty");
	pmcsh_region_end("empty");
	puts("done");
	return 0;
}
