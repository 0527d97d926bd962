/* The choice of a variant (and so of a descriptor table) at run time.
 * Built at the baseline: nothing here may use an instruction the oldest
 * supported CPU lacks, since it runs before any check. */
#include <stdio.h>
#include <string.h>
#include "stream.h"

const struct stream_kernel *stream_kernel_find(const struct stream_variant *v, const char *name)
{
	for (const struct stream_kernel *k = v->kernels; k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

/* ---- variants, best first, each with the check that this CPU runs it ---- */

static int always(void) { return 1; }
#if defined(__x86_64__)
extern const struct stream_variant stream_variant_avx512, stream_variant_avx2, stream_variant_sse2;
#if defined(__clang__)
/* clang (14) knows no level names: the level's features that it does know;
 * every CPU with these has the rest of v3 (F16C, LZCNT, MOVBE). */
static int has_v3(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
	       __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
}
static int has_v4(void)
{
	return has_v3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512vl");
}
#else
static int has_v4(void) { return __builtin_cpu_supports("x86-64-v4") != 0; }
static int has_v3(void) { return __builtin_cpu_supports("x86-64-v3") != 0; }
#endif
#else
extern const struct stream_variant stream_variant_generic;
#endif
static const struct {
	const struct stream_variant *v;
	int (*runs)(void);
} variants[] = {
#if defined(__x86_64__)
	{&stream_variant_avx512, has_v4},
	{&stream_variant_avx2, has_v3},
	{&stream_variant_sse2, always},
#else
	{&stream_variant_generic, always},
#endif
};
#define NVARIANTS (int)(sizeof variants / sizeof variants[0])

const struct stream_variant *stream_variant_at(int i, int *supported)
{
	if (i < 0 || i >= NVARIANTS)
		return NULL;
#if defined(__x86_64__)
	__builtin_cpu_init();
#endif
	*supported = variants[i].runs();
	return variants[i].v;
}

const struct stream_variant *stream_variant_best(void)
{
	int ok;
	for (int i = 0; i < NVARIANTS; i++)
		if (stream_variant_at(i, &ok) && ok)
			return variants[i].v;
	return variants[NVARIANTS - 1].v;
}

const struct stream_variant *stream_variant_find(const char *name, char *why, size_t len)
{
	int ok, n = 0;
	char names[128] = "";
	for (int i = 0; i < NVARIANTS; i++) {
		const struct stream_variant *v = stream_variant_at(i, &ok);
		if (strcmp(v->name, name) == 0) {
			if (ok)
				return v;
			snprintf(why, len, "this cpu cannot run the %s variant", name);
			return NULL;
		}
		if (ok)
			n += snprintf(names + n, sizeof names - (size_t)n, "%s%s", n ? ", " : "", v->name);
	}
	snprintf(why, len, "no variant '%s' (this cpu runs %s)", name, names);
	return NULL;
}

/* The reference loops carry the features -march=native gave them on the
 * build machine (ref_stream_isa, a string: data, safe to read anywhere). */
int stream_ref_runnable(char *why, size_t len)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
	const struct {
		const char *name;
		int has;
	} feats[] = {
		{"avx512f", __builtin_cpu_supports("avx512f")}, {"avx512vl", __builtin_cpu_supports("avx512vl")},
		{"avx512bw", __builtin_cpu_supports("avx512bw")}, {"avx512dq", __builtin_cpu_supports("avx512dq")},
		{"avx2", __builtin_cpu_supports("avx2")}, {"fma", __builtin_cpu_supports("fma")},
		{"avx", __builtin_cpu_supports("avx")}, {"bmi2", __builtin_cpu_supports("bmi2")},
	};
	char missing[128] = "";
	size_t n = 0;
	for (size_t i = 0; i < sizeof feats / sizeof feats[0]; i++) {
		char tok[32];
		snprintf(tok, sizeof tok, " %s ", feats[i].name);
		if (strstr(ref_stream_isa, tok) && !feats[i].has && n < sizeof missing)
			n += (size_t)snprintf(missing + n, sizeof missing - n, "%s%s", n ? ", " : "", feats[i].name);
	}
	if (n > 0) {
		snprintf(why, len, "the reference loops were built -march=native for a cpu with %s, which this one "
			 "lacks: rebuild pmcsh here to compare", missing);
		return 0;
	}
#else
	(void)why;
	(void)len;
#endif
	return 1;
}
