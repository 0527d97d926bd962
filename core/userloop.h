/* A user's loop, loaded from a shared object into a kernel descriptor the
 * STREAM engine runs as it runs its own (include/pmcsh/loop.h says what the
 * object exports).  Lua-free: 0 or -errno with a sentence in msg. */
#ifndef PMCSH_USERLOOP_H
#define PMCSH_USERLOOP_H
#include <stddef.h>
#include "../kernels/stream.h"

struct userloop {
	void *dl;			/* dlopen's handle; NULL when closed */
	struct stream_kernel k;		/* what the engine runs (k.fn or k.own) */
	int convention;			/* PMCSH_STREAM or PMCSH_OWN */
	int described;			/* the object exports SYMBOL_pmcsh_loop */
	int probed;			/* reads/writes found by running it on one element */
	double elements_per_trip;	/* the descriptor's, 0 unknown */
	char name[128], symbol[128], description[256];
};

/* Loads symbol (NULL: "loop") from the shared object at path into *u;
 * shown (NULL: path) is the file as messages and descriptions name it.  -ENOENT: no such file or symbol;
 * -ENOEXEC: not a shared object of this machine's architecture; -EINVAL:
 * a descriptor pmcsh cannot use.  *u is closed on failure. */
int userloop_open(struct userloop *u, const char *path, const char *symbol, const char *shown,
		  char *msg, size_t len);
/* dlclose; a closed loop is fine. */
void userloop_close(struct userloop *u);

#endif
