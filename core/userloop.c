/* A user's loop from a shared object (core/userloop.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "userloop.h"
#include "../include/pmcsh/loop.h"

static const char *machine_name(unsigned m)
{
	switch (m) {
	case EM_X86_64: return "x86-64";
	case EM_386: return "i386";
	case EM_AARCH64: return "aarch64";
	case EM_ARM: return "arm";
	case EM_RISCV: return "riscv";
	case EM_PPC64: return "ppc64";
	case EM_S390: return "s390";
	default: return "another";
	}
}

/* The ELF header's class, type and machine of the file at path; -errno. */
static int elf_head(const char *path, int *cls, unsigned *type, unsigned *machine)
{
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	ssize_t n = read(fd, h, sizeof h);
	close(fd);
	if (n < (ssize_t)sizeof h || memcmp(h, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;
	/* e_type and e_machine sit at 16 and 18 in both classes, in the file's byte order */
	int le = h[EI_DATA] == ELFDATA2LSB;
	*cls = h[EI_CLASS];
	*type = le ? h[16] | h[17] << 8 : h[16] << 8 | h[17];
	*machine = le ? h[18] | h[19] << 8 : h[18] << 8 | h[19];
	return 0;
}

/* Whether the file at path (of this machine's class) holds every byte its
 * program headers map: the loader maps segments past a truncated file's
 * end, and the first touch there is SIGBUS.  0, or -ENOEXEC with why. */
static int elf_extent(const char *path, const char **why)
{
	ElfW(Ehdr) e;
	struct stat st;
	int rc = -ENOEXEC;
	*why = "its program headers lie outside the file";
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		*why = "not a regular file";
		goto out;
	}
	if (pread(fd, &e, sizeof e, 0) != (ssize_t)sizeof e || e.e_phentsize != sizeof(ElfW(Phdr)) ||
	    e.e_phoff > (uint64_t)st.st_size || e.e_phnum > ((uint64_t)st.st_size - e.e_phoff) / sizeof(ElfW(Phdr)))
		goto out;
	*why = "a segment lies past the file's end (a truncated or damaged file)";
	for (unsigned i = 0; i < e.e_phnum; i++) {
		ElfW(Phdr) ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(e.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			goto out;
		if (ph.p_offset > (uint64_t)st.st_size || ph.p_filesz > (uint64_t)st.st_size - ph.p_offset)
			goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

/* A string of the guest's at p copied into buf without touching p: a bad
 * pointer is said, never followed (process_vm_readv on this process
 * answers EFAULT).  0, or -EFAULT. */
static int copy_guest_string(const char *p, char *buf, size_t len)
{
	size_t got = 0, page = (size_t)sysconf(_SC_PAGESIZE);
	while (got + 1 < len) {
		/* up to the page's end: a string that ends early may sit at a mapping's last byte */
		size_t want = page - ((uintptr_t)(p + got) % page);
		if (want > len - 1 - got)
			want = len - 1 - got;
		struct iovec lo = {buf + got, want}, re = {(void *)(p + got), want};
		ssize_t n = process_vm_readv(getpid(), &lo, 1, &re, 1, 0);
		if (n <= 0)
			return -EFAULT;
		void *nul = memchr(buf + got, 0, (size_t)n);
		got += (size_t)n;
		if (nul)
			return 0;
	}
	buf[got] = 0;
	return 0;
}

/* What a bare STREAM loop reads and writes, found by running it on one
 * element of each array twice: an array is written when its value moves,
 * read when moving its input moves what is written.  A sum returned is a
 * reduction. */
static void probe(struct stream_kernel *k)
{
	static const double in[3] = {1.25, 2.5, 0.75};
	double base[3] = {in[0], in[1], in[2]};
	double r = k->fn(&base[0], &base[1], &base[2], STREAM_SCALAR, 1);
	k->reads = k->writes = 0;
	for (int x = 0; x < 3; x++)
		if (base[x] != in[x])
			k->writes |= 1u << x;
	for (int x = 0; x < 3; x++) {
		double moved[3] = {in[0], in[1], in[2]};
		moved[x] = in[x] * 1.5 + 0.125;
		double r2 = k->fn(&moved[0], &moved[1], &moved[2], STREAM_SCALAR, 1);
		int read = r2 != r;
		for (int y = 0; y < 3; y++)
			if (k->writes & (1u << y))
				read |= moved[y] != base[y];
		if (read)
			k->reads |= 1u << x;
	}
	k->reduction = r != 0;
}

void userloop_close(struct userloop *u)
{
	if (u->dl)
		dlclose(u->dl);
	u->dl = NULL;
	memset(&u->k, 0, sizeof u->k);
}

static int fail(struct userloop *u, int err, char *msg, size_t len, const char *fmt, const char *a, const char *b)
{
	snprintf(msg, len, fmt, a, b);
	userloop_close(u);
	return -err;
}

/* Whether path is a shared object of this machine's code (its ELF
 * header against pmcsh's own): 0, or fail's -errno with msg. */
static int check_elf(struct userloop *u, const char *path, const char *file_shown, char *msg, size_t len)
{
	int cls, mcls;
	unsigned type, machine, mtype, mmachine;
	int rc = elf_head(path, &cls, &type, &machine);
	if (rc == -ENOEXEC)
		return fail(u, ENOEXEC, msg, len, "%s is not a shared object (no ELF header)%s", file_shown, "");
	if (rc < 0)
		return fail(u, -rc, msg, len, "%s: %s", file_shown, strerror(-rc));
	if (elf_head("/proc/self/exe", &mcls, &mtype, &mmachine) == 0 && (machine != mmachine || cls != mcls)) {
		char what[64];
		snprintf(what, sizeof what, "%s %d-bit", machine_name(machine), cls == ELFCLASS64 ? 64 : 32);
		snprintf(msg, len, "%s is %s code; this pmcsh runs %s %d-bit code: build it for this machine", file_shown,
			 what, machine_name(mmachine), mcls == ELFCLASS64 ? 64 : 32);
		userloop_close(u);
		return -ENOEXEC;
	}
	if (type != ET_DYN)
		return fail(u, ENOEXEC, msg, len, "%s is not a shared object (build it with -shared -fPIC)%s", file_shown, "");
	const char *why;
	if ((rc = elf_extent(path, &why)) < 0)
		return fail(u, -rc, msg, len, "cannot load %s: %s", file_shown, rc == -ENOEXEC ? why : strerror(-rc));
	return 0;
}

/* A loop with its descriptor d (SYMBOL_pmcsh_loop, named dname): d
 * checked, then its functions, arrays and figures taken into u.  Returns
 * 0, or fail's -errno with msg. */
static int take_described(struct userloop *u, const struct pmcsh_loop *d, const char *dname, const char *file_shown,
			  char *msg, size_t len)
{
	struct stream_kernel *k = &u->k;
	/* version 1 ends before init_part: its fields past reference are not there to read */
	if (d->version < 1 || d->version > PMCSH_LOOP_VERSION)
		return fail(u, EINVAL, msg, len, "%s: %s's version is not PMCSH_LOOP_VERSION (pmcsh/loop.h): "
			    "build it against this pmcsh's header", file_shown, dname);
	if (d->convention != PMCSH_STREAM && d->convention != PMCSH_OWN)
		return fail(u, EINVAL, msg, len, "%s: %s.convention is neither PMCSH_STREAM nor PMCSH_OWN", file_shown, dname);
	if ((d->convention == PMCSH_STREAM && !d->stream) || (d->convention == PMCSH_OWN && !d->own))
		return fail(u, EINVAL, msg, len, "%s: %s names no function for its convention", file_shown, dname);
	if ((d->reads | d->writes) & ~7u || !isfinite(d->bytes) || d->bytes < 0 || !isfinite(d->flops) ||
	    d->flops < 0 || !isfinite(d->elements_per_trip) || d->elements_per_trip < 0)
		return fail(u, EINVAL, msg, len, "%s: %s: reads/writes outside PMCSH_A|B|C, or a negative "
			    "or infinite number", file_shown, dname);
	char name[sizeof u->name], description[sizeof u->description];
	name[0] = description[0] = 0;
	if ((d->name && copy_guest_string(d->name, name, sizeof name) < 0) ||
	    (d->description && copy_guest_string(d->description, description, sizeof description) < 0))
		return fail(u, EINVAL, msg, len, "%s: %s.name or .description points at no readable string", file_shown,
			    dname);
	u->described = 1;
	u->convention = d->convention;
	if (name[0])
		snprintf(u->name, sizeof u->name, "%s", name);
	snprintf(u->description, sizeof u->description, "%s", description);
	k->fn = d->convention == PMCSH_STREAM ? d->stream : NULL;
	k->own = d->convention == PMCSH_OWN ? d->own : NULL;
	k->init = d->init;
	k->init_part = d->version >= 2 ? d->init_part : NULL;
	k->fini = d->fini;
	k->reads = d->reads;
	k->writes = d->writes;
	k->reduction = d->reduction;
	k->replay = d->convention == PMCSH_STREAM ? d->reference : NULL;
	k->own_flops = d->flops;
	k->bytes = d->bytes;
	u->elements_per_trip = d->elements_per_trip;
	return 0;
}

/* A loop without a descriptor: fn, with SYMBOL_init_part or SYMBOL_init
 * (and _fini) beside it a loop over its own data (PMCSH_OWN), else one of
 * STREAM's convention. */
static void take_bare(struct userloop *u, const char *sym, void *fn)
{
	struct stream_kernel *k = &u->k;
	char iname[160];
	snprintf(iname, sizeof iname, "%s_init_part", sym);
	void *init_part = dlsym(u->dl, iname);
	snprintf(iname, sizeof iname, "%s_init", sym);
	void *init = dlsym(u->dl, iname);
	if (init || init_part) {
		snprintf(iname, sizeof iname, "%s_fini", sym);
		u->convention = PMCSH_OWN;
		k->own = (pmcsh_own_fn *)fn;
		k->init = (pmcsh_init_fn *)init;
		k->init_part = (pmcsh_init_part_fn *)init_part;
		k->fini = (pmcsh_fini_fn *)dlsym(u->dl, iname);
	} else {
		u->convention = PMCSH_STREAM;
		k->fn = (stream_fn)fn;
	}
}

int userloop_open(struct userloop *u, const char *path, const char *symbol, const char *shown,
		  char *msg, size_t len)
{
	memset(u, 0, sizeof *u);
	const char *file_shown = shown ? shown : path;
	int rc = check_elf(u, path, file_shown, msg, len);
	if (rc)
		return rc;
	/* a path with a slash: dlopen takes it as a file, never a library search */
	char file[4096];
	snprintf(file, sizeof file, "%s%s", strchr(path, '/') ? "" : "./", path);
	u->dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
	if (!u->dl)
		return fail(u, ENOEXEC, msg, len, "cannot load %s: %s", file_shown, dlerror());
	const char *sym = symbol && *symbol ? symbol : "loop";
	if (strlen(sym) >= sizeof u->symbol - 16)
		return fail(u, EINVAL, msg, len, "symbol %s: too long%s", sym, "");
	snprintf(u->symbol, sizeof u->symbol, "%s", sym);
	char dname[160];
	snprintf(dname, sizeof dname, "%s_pmcsh_loop", sym);
	const struct pmcsh_loop *d = dlsym(u->dl, dname);
	void *fn = dlsym(u->dl, sym);
	if (!fn && !d) {
		if (symbol && *symbol && strcmp(file_shown, path) != 0)	/* built from source */
			return fail(u, ENOENT, msg, len, "%s exports no symbol %s (a static function is not "
				    "exported)", file_shown, sym);
		if (symbol && *symbol)
			return fail(u, ENOENT, msg, len, "%s exports no symbol %s (nm -D lists what it exports)",
				    file_shown, sym);
		snprintf(msg, len, "%s exports no symbol %s (the default when none is named): name your loop's "
			 "function after a colon, %s:SYMBOL", file_shown, sym, file_shown);
		userloop_close(u);
		return -ENOENT;
	}
	struct stream_kernel *k = &u->k;
	snprintf(u->name, sizeof u->name, "%s", sym);
	if (d) {
		if ((rc = take_described(u, d, dname, file_shown, msg, len)))
			return rc;
	} else {
		take_bare(u, sym, fn);
	}
	if (u->convention == PMCSH_STREAM && !u->described) {
		probe(k);
		u->probed = 1;
	}
	if (!u->description[0])
		snprintf(u->description, sizeof u->description, "%s from %s", sym, file_shown);
	k->name = u->name;
	k->description = u->description;
	k->symbol = u->symbol;
	return 0;
}
