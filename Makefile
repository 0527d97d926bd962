# pmcsh — one non-recursive Makefile.
PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
BIN     ?= pmcsh

CC      ?= cc
PKG_CONFIG ?= pkg-config
# make CROSS=aarch64-linux-gnu-: a cross build against Debian's multiarch
# libraries (dpkg --add-architecture arm64), into its own build folder.
CROSS ?=
ifneq ($(CROSS),)
CC := $(CROSS)gcc
TRIPLET := $(CROSS:%-=%)
BUILD := build-$(TRIPLET)
BIN := $(BUILD)/pmcsh
PKG_CONFIG := PKG_CONFIG_LIBDIR=/usr/lib/$(TRIPLET)/pkgconfig pkg-config
REFCFLAGS :=
CFLAGS_CROSS := -I/usr/include/$(TRIPLET)
LDFLAGS += -L/usr/lib/$(TRIPLET) -Wl,-rpath-link,/usr/lib/$(TRIPLET)
endif
LUA_CFLAGS := $(shell $(PKG_CONFIG) --cflags lua5.4) $(CFLAGS_CROSS)
LUA_LIBS   := $(shell $(PKG_CONFIG) --libs lua5.4)
RL_LIBS    := $(shell $(PKG_CONFIG) --libs readline 2>/dev/null || echo -lreadline)

CFLAGS  ?= -O2 -g
# override: a CFLAGS given on the command line (LuaRocks gives one) keeps
# the flags the code needs
override CFLAGS += $(CFLAGS_CROSS) -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -pthread -fno-strict-aliasing
# Kernels are the measured code: built like a hand-written STREAM loop, at
# the baseline of the architecture so the binary runs on any CPU of it; the
# STREAM loops are built once more per instruction-set variant and chosen at
# run time (kernels/stream_kernels.c).  The reference loops are the
# yardstick: -march=native, called only where this CPU runs them.
KCFLAGS ?= -O3 -g
REFCFLAGS ?= -march=native
MACHINE := $(shell $(CC) -dumpmachine)
ifneq (,$(findstring x86_64,$(MACHINE)))
STREAM_VARIANTS := avx512 avx2 sse2
else
STREAM_VARIANTS := generic
endif
VARIANT_FLAGS_avx512 := -march=x86-64-v4
VARIANT_FLAGS_avx2 := -march=x86-64-v3
LDLIBS  += $(LUA_LIBS) $(RL_LIBS) -lpfm -lm -pthread

VERSION := 0.1.0

# The Lua-free core (the counter layer, the window, child processes,
# calibration, the pty): one list, so that other programs (a fuzz harness,
# say) link against it with the kernels.  Built without Lua's headers, so
# none of it can include lua.h; the binding files core/l*.c convert.
CORE_SRC := core/evname.c core/sysfs.c core/group.c core/rdpmc.c core/pmc_window.c core/child.c core/calib.c \
	core/machine.c core/control.c \
	core/pty.c core/pfmforced.c core/userloop.c core/guard.c core/safepath.c core/uread.c core/regions.c
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
BIND_SRC := $(wildcard core/l*.c)
UNLISTED := $(filter-out $(CORE_SRC) $(BIND_SRC),$(wildcard core/*.c))
ifneq ($(UNLISTED),)
$(error $(UNLISTED): add to CORE_SRC (Lua-free) or name it core/l*.c (a binding))
endif
# loop_driver.c is a program of its own (bench-stream --loop builds it)
KERN_SRC := $(filter-out kernels/stream.c kernels/peak.c kernels/loop_driver.c,$(wildcard kernels/*.c))
KERN_OBJ := $(KERN_SRC:%.c=$(BUILD)/%.o) $(STREAM_VARIANTS:%=$(BUILD)/kernels/stream-%.o) \
	$(STREAM_VARIANTS:%=$(BUILD)/kernels/peak-%.o)
OBJ := $(CORE_OBJ) $(BIND_SRC:%.c=$(BUILD)/%.o) $(KERN_OBJ)
DEP := $(OBJ:.o=.d) $(BUILD)/marker/marker.d $(BUILD)/marker/uread.d $(BUILD)/marker/likwid.d

# The marker library (marker/, include/pmcsh/marker.h): linked into the
# user's program, so it is built as a guest: position independent, only
# pmcsh_* exported, no Lua and no libpfm4.
MARKER_SO := $(BUILD)/libpmcsh-marker.so
MARKER_A  := $(BUILD)/libpmcsh-marker.a
MARKER_OBJ := $(BUILD)/marker/marker.o $(BUILD)/marker/uread.o $(BUILD)/marker/likwid.o
MARKER_CFLAGS := $(CFLAGS) -O3 -fstrict-aliasing -fPIC -fvisibility=hidden -DPMCSH_MARKER_LIB

all: $(BIN) $(MARKER_SO) $(MARKER_A) lua-module

$(BUILD)/marker/%.o: marker/%.c
	@mkdir -p $(@D)
	$(CC) $(MARKER_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/marker/uread.o: core/uread.c
	@mkdir -p $(@D)
	$(CC) $(MARKER_CFLAGS) -MMD -MP -c -o $@ $<

$(MARKER_SO): $(MARKER_OBJ)
	$(CC) $(MARKER_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libpmcsh-marker.so.0 -o $@.0 $(MARKER_OBJ) -pthread
	ln -sf libpmcsh-marker.so.0 $@

$(MARKER_A): $(MARKER_OBJ)
	rm -f $@ && $(CROSS)ar rcs $@ $(MARKER_OBJ)

# LIKWID's Fortran module (use likwid), where gfortran is: a .mod is the
# compiler's own format, so it is built here, by the compiler users have.
ifeq ($(origin FC),default)
FC := gfortran
endif
HAVE_FC := $(shell command -v $(FC) 2>/dev/null)
FMOD := $(if $(HAVE_FC),$(BUILD)/fortran/likwid.mod)
$(BUILD)/fortran/likwid.mod: marker/likwid.f90
	@mkdir -p $(@D)
	$(FC) -c -J $(@D) -o $(@D)/likwid.o $<

marker: $(MARKER_SO) $(MARKER_A) $(FMOD)

# pmcsh's Lua modules precompiled, which the binary loads in place of a
# source no newer than them (core/lhost.c): parsing is most of a recipe's
# start-up.  Each keeps the name its source is loaded under, so messages
# and tracebacks read the same.  Skipped where lua5.4 is not installed.
LUA_BIN ?= $(shell command -v lua5.4 2>/dev/null)
LUADUMP = local f = assert(io.open(arg[1], "rb")); local c = assert(load(f:read("a"), "@" .. arg[2])); \
	f:close(); local o = assert(io.open(arg[3], "wb")); o:write(string.dump(c)); assert(o:close())
LUAC_OUT := $(if $(LUA_BIN),$(patsubst %.lua,$(BUILD)/luac/%.luac,$(shell find lua/pmcsh -name '*.lua')))
$(BIN): $(OBJ) | $(LUAC_OUT)
	$(CC) $(CFLAGS) $(LDFLAGS) -rdynamic -o $@ $(OBJ) $(LDLIBS)

$(BUILD)/luac/%.luac: %.lua
	@mkdir -p $(@D)
	@echo '$(LUADUMP)' | $(LUA_BIN) - $< $(CURDIR)/$< $@
# and installed beside the sources, under the installed sources' names
install: install-luac
install-luac:
	$(if $(LUA_BIN),find lua/pmcsh -name '*.lua' | while read -r f; do mkdir -p "$(SHARE)/luac/$${f%/*}" && \
		echo '$(LUADUMP)' | $(LUA_BIN) - "$$f" "$(PREFIX)/share/pmcsh/$$f" "$(SHARE)/luac/$${f%.lua}.luac" || exit 1; done)
.PHONY: install-luac

$(BUILD)/core/%.o: core/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LUA_CFLAGS) -DPMCSH_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<

$(CORE_OBJ): LUA_CFLAGS := $(CFLAGS_CROSS)

$(BUILD)/kernels/%.o: kernels/%.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) $(CFLAGS_CROSS) -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -pthread -MMD -MP -c -o $@ $<

$(BUILD)/kernels/ref_stream.o: kernels/ref_stream.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) $(REFCFLAGS) -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -MMD -MP -c -o $@ $<

$(BUILD)/kernels/stream-%.o: kernels/stream.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) $(VARIANT_FLAGS_$*) -DSTREAM_VARIANT=$* -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -MMD -MP -c -o $@ $<

# The peak-FLOP kernels, per variant as the STREAM loops are.
$(BUILD)/kernels/peak-%.o: kernels/peak.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) $(VARIANT_FLAGS_$*) -DPEAK_VARIANT=$* -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -MMD -MP -c -o $@ $<

# The same modules for a plain lua5.4 (require "pmcsh.pmc" from lua5.4,
# busted, another host): one C module, build/lua/pmcsh.so, every object
# built once more position independent, without the host (lhost.c, lrepl.c)
# and without linking liblua (the host provides it, as Debian's modules do).
PIC := $(BUILD)/pic
PIC_OBJ := $(filter-out $(PIC)/core/lhost.o $(PIC)/core/lrepl.o,$(OBJ:$(BUILD)/%=$(PIC)/%))
LUA_MODULE := $(BUILD)/lua/pmcsh.so
lua-module: $(LUA_MODULE)

$(LUA_MODULE): $(PIC_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared -o $@ $(PIC_OBJ) -lpfm -lm -pthread

$(PIC)/core/%.o: core/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC $(LUA_CFLAGS) -DPMCSH_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<

$(CORE_SRC:%.c=$(PIC)/%.o): LUA_CFLAGS := $(CFLAGS_CROSS)

$(PIC)/kernels/%.o: kernels/%.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) -fPIC $(CFLAGS_CROSS) -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -pthread -MMD -MP -c -o $@ $<

$(PIC)/kernels/ref_stream.o: kernels/ref_stream.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) -fPIC $(REFCFLAGS) -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -MMD -MP -c -o $@ $<

$(PIC)/kernels/stream-%.o: kernels/stream.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) -fPIC $(VARIANT_FLAGS_$*) -DSTREAM_VARIANT=$* -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -MMD -MP -c -o $@ $<

$(PIC)/kernels/peak-%.o: kernels/peak.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) -fPIC $(VARIANT_FLAGS_$*) -DPEAK_VARIANT=$* -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -MMD -MP -c -o $@ $<

-include $(DEP) $(PIC_OBJ:.o=.d)
$(PIC_OBJ:.o=.d): ;
$(DEP): ;

# Dependencies: Debian packages, installed when missing.
PKGS := lua5.4 liblua5.4-dev libreadline-dev libpfm4-dev lua-busted lua-cjson gnuplot-nox valgrind
deps:
	@sh .ci/deps.sh $(PKGS)

# The tests: busted with pmcsh itself as the interpreter.
check: $(BIN) marker
	@./$(BIN) spec/support/run.lua spec

# The sanitized build: clang with AddressSanitizer and UBSan (float-cast-
# overflow too; -fno-sanitize-recover, so a report ends the process), in its
# own folder, then the whole suite under it.  Every process writes its
# reports to $(ASAN)/reports/, and any report fails the run, counted as a
# failure in the summary: a child pmcsh's report would otherwise be only an
# exit status that a spec may expect.  Specs read pmcsh.paths.sanitized.
ASAN := build-asan
SANITIZE := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_LOG = log_path=$(CURDIR)/$(ASAN)/reports/$(1):print_stacktrace=1
asan-deps:
	@sh .ci/deps.sh clang libclang-rt-14-dev
asan-build:
	@$(MAKE) --no-print-directory BUILD=$(ASAN) BIN=$(ASAN)/pmcsh CC='clang $(SANITIZE)' $(ASAN)/pmcsh
asan: asan-build
	@rm -rf $(ASAN)/reports && mkdir -p $(ASAN)/reports
	@ASAN_OPTIONS=$(call SAN_LOG,asan) UBSAN_OPTIONS=$(call SAN_LOG,ubsan) \
		./$(ASAN)/pmcsh spec/support/run.lua spec; status=$$?; \
	n=$$(ls $(ASAN)/reports | wc -l); \
	if [ "$$n" -gt 0 ]; then cat $(ASAN)/reports/*; echo "$$n sanitizer reports, above"; echo "0 passed, $$n failed"; exit 1; fi; \
	exit $$status

# Coverage-guided fuzzing (clang's libFuzzer, with ASan and UBSan) of each
# parser of outside input, a harness under spec/fuzz/ with its seeds in
# spec/fuzz/corpus/NAME/: event names (evname) and a PMU's sysfs files
# (sysfs_files) through the resolver, built here to read the fake tree
# spec/fuzz/sysfs; lists of numbers (id_list: cpumasks, stat -C and -p);
# recipe options (recipe_options), survey results files (result_lines),
# what the survey renders of them (render), a results file as pmcsh compare
# reads and renders it (compare_files), a baseline as pmcsh health reads
# it (baseline) and the loops of a header survey --resume would build
# (resume_loops) through pmcsh's Lua modules, on make asan's objects.  Each
# runs FUZZ_SECONDS; what it found is kept in $(FUZZ)/corpus/NAME, a crash's
# input in $(FUZZ)/NAME-crash-*, its log in $(FUZZ)/NAME.log.  The Lua
# harnesses run without libFuzzer's leak check after each input: Lua's
# collector frees later, so every input looked like a leak and cost a heap
# scan (5 ms an input; 0.2 ms without).
FUZZ := build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_C := evname sysfs_files id_list
FUZZ_LUA := recipe_options result_lines render compare_files baseline resume_loops
FUZZ_CFLAGS := -O1 -g -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE -Wall -Wextra \
	-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
$(FUZZ)/core/%.o: core/%.c
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -DSYSFS_PMUS='"$(CURDIR)/$(FUZZ)/sysfs"' -MMD -MP -c -o $@ $<
$(FUZZ)/kernels/%.o: kernels/%.c
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
# the resolver and what its messages call on (group.c's open-error text;
# machine.c's huge page counts, read by pages.c)
FUZZ_CORE := evname sysfs group machine rdpmc uread
$(FUZZ_C:%=$(FUZZ)/%): $(FUZZ)/%: spec/fuzz/%.c $(FUZZ_CORE:%=$(FUZZ)/core/%.o) $(FUZZ)/kernels/pages.o
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -DSYSFS_PMUS='"$(CURDIR)/$(FUZZ)/sysfs"' -o $@ $^ -lpfm
# pmcsh less its host (lhost.c's main, the REPL) in the Lua harness
FUZZ_LUA_OBJ = $(filter-out %/lhost.o %/lrepl.o,$(OBJ:$(BUILD)/%=$(ASAN)/%))
$(FUZZ_LUA:%=$(FUZZ)/%): $(FUZZ)/%: spec/fuzz/lua.c spec/fuzz/%.lua asan-build
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $(LUA_CFLAGS) -DDRIVER='"$*"' -DFUZZ_ROOT='"$(CURDIR)"' \
		-o $@ spec/fuzz/lua.c $(FUZZ_LUA_OBJ) $(LDLIBS)
-include $(wildcard $(FUZZ)/core/*.d $(FUZZ)/kernels/*.d)

fuzz: $(FUZZ_C:%=$(FUZZ)/%) $(FUZZ_LUA:%=$(FUZZ)/%)
	@rm -rf $(FUZZ)/sysfs && cp -R spec/fuzz/sysfs $(FUZZ)/sysfs
	@pass=0; fail=0; for h in $(FUZZ_C) $(FUZZ_LUA); do \
		mkdir -p $(FUZZ)/corpus/$$h; \
		leaks=1; case " $(FUZZ_LUA) " in *" $$h "*) leaks=0;; esac; \
		if $(FUZZ)/$$h -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=$(FUZZ)/$$h- \
			-detect_leaks=$$leaks \
			$(FUZZ)/corpus/$$h spec/fuzz/corpus/$$h >$(FUZZ)/$$h.log 2>&1; then pass=$$((pass + 1)); \
		else fail=$$((fail + 1)); tail -40 $(FUZZ)/$$h.log; fi; \
		printf '%-16s %10s executions in %ss, %s inputs in its corpus\n' $$h \
			"$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ)/$$h.log)" $(FUZZ_SECONDS) \
			"$$(ls $(FUZZ)/corpus/$$h | wc -l)"; \
	done; echo "$$pass passed, $$fail failed"; [ $$fail -eq 0 ]

# The arm64 lab (spec/lab/lab.sh): pmcsh cross-built, booted in QEMU with an
# emulated Armv8 PMU, the hardware-counter specs run inside.
lab-deps:
	@bash spec/lab/lab.sh deps
lab-check: lab-deps $(BIN)
	@spec/lab/run ./pmcsh spec/support/run.lua spec/lab

# The emulated Slurm cluster (spec/slurm/run): munged, slurmctld and four
# slurmd on this machine, pmcsh health and a survey through srun and sbatch,
# pmcsh compare naming the node slowed on purpose.  Root; installs
# slurm-wlm and munge when missing.
slurm-check: $(BIN)
	@timeout 1500 bash spec/slurm/run

# Real clients (spec/clients/*.sh): programs and suites pmcsh did not write,
# run through its doors, each script a summary line, added up.
clients: $(BIN) marker
	@bash spec/clients/run

SHARE := $(DESTDIR)$(PREFIX)/share/pmcsh
# What a user builds against: include/pmcsh/*.h and a pkg-config file each
# (pmcsh-loop.pc: the loops' header, nothing to link; pmcsh-marker.pc: the
# marker library; pmcsh-likwid.pc: the same under LIKWID's macros).
INCDIR := $(DESTDIR)$(PREFIX)/include/pmcsh
# the marker library and the .pc files (the rockspec moves them out of the
# lib/ LuaRocks deploys as Lua modules)
MARKER_LIBDIR ?= $(PREFIX)/lib
PCDIR  := $(DESTDIR)$(MARKER_LIBDIR)/pkgconfig
LIBDIR := $(DESTDIR)$(MARKER_LIBDIR)
PC_LIBDIR := $(patsubst $(PREFIX)/%,$${prefix}/%,$(MARKER_LIBDIR))
# pmcsh's modules for a plain lua5.4: the C module and the Lua layer
LUA_LIBDIR ?= $(DESTDIR)$(PREFIX)/lib/lua/5.4
LUA_SHAREDIR ?= $(DESTDIR)$(PREFIX)/share/lua/5.4
install: $(BIN) marker lua-module
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE) $(DESTDIR)$(PREFIX)/share/man/man1 $(INCDIR) $(PCDIR)
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/pmcsh
	cp -R lua scripts events $(SHARE)/
	install -d $(SHARE)/kernels && install -m 644 kernels/loop_driver.c $(SHARE)/kernels/
	install -m 644 pmcsh.1 $(DESTDIR)$(PREFIX)/share/man/man1/pmcsh.1
	install -m 644 include/pmcsh/loop.h $(INCDIR)/
	printf 'prefix=%s\nincludedir=$${prefix}/include\n\nName: pmcsh-loop\nDescription: %s\nVersion: %s\nCflags: -I$${includedir}\n' \
		'$(PREFIX)' 'your own loop, measured by pmcsh survey --loop' '$(VERSION)' >$(PCDIR)/pmcsh-loop.pc
	install -m 644 include/pmcsh/marker.h include/pmcsh/likwid-marker.h include/pmcsh/likwid.h $(INCDIR)/
	$(if $(FMOD),install -m 644 $(FMOD) $(INCDIR)/)
	install -d $(LIBDIR)
	install -m 755 $(MARKER_SO).0 $(LIBDIR)/libpmcsh-marker.so.0
	ln -sf libpmcsh-marker.so.0 $(LIBDIR)/libpmcsh-marker.so
	install -m 644 $(MARKER_A) $(LIBDIR)/
	printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=%s\n\nName: pmcsh-marker\nDescription: %s\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -Wl,-rpath,$${libdir} -lpmcsh-marker\nLibs.private: -pthread\n' \
		'$(PREFIX)' '$(PC_LIBDIR)' 'regions of your program, counted by pmcsh stat --regions' '$(VERSION)' >$(PCDIR)/pmcsh-marker.pc
	printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=%s\n\nName: pmcsh-likwid\nDescription: %s\nVersion: %s\nCflags: -I$${includedir}/pmcsh -I$${includedir} -DLIKWID_PERFMON\nLibs: -L$${libdir} -Wl,-rpath,$${libdir} -lpmcsh-marker\nLibs.private: -pthread\n' \
		'$(PREFIX)' '$(PC_LIBDIR)' "LIKWID's Marker API on pmcsh's regions" '$(VERSION)' >$(PCDIR)/pmcsh-likwid.pc
	install -d $(LUA_LIBDIR) $(LUA_SHAREDIR)/pmcsh
	install -m 755 $(LUA_MODULE) $(LUA_LIBDIR)/pmcsh.so
	cp -R lua/pmcsh/. $(LUA_SHAREDIR)/pmcsh/
	sed -i 's|^local installed = nil.*|local installed = "$(PREFIX)/share/pmcsh"|' $(LUA_SHAREDIR)/pmcsh/paths.lua

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/bin/pmcsh $(SHARE) $(DESTDIR)$(PREFIX)/share/man/man1/pmcsh.1 $(INCDIR) \
		$(PCDIR)/pmcsh-loop.pc $(PCDIR)/pmcsh-marker.pc $(PCDIR)/pmcsh-likwid.pc \
		$(LIBDIR)/libpmcsh-marker.so $(LIBDIR)/libpmcsh-marker.so.0 $(LIBDIR)/libpmcsh-marker.a \
		$(LUA_LIBDIR)/pmcsh.so $(LUA_SHAREDIR)/pmcsh

clean:
	rm -rf $(BUILD) $(BIN) $(ASAN) $(FUZZ)

.PHONY: all marker lua-module deps check asan-deps asan-build asan fuzz lab-deps lab-check slurm-check clients install uninstall clean
