# pmcsh — one non-recursive Makefile.
PREFIX  ?= /usr/local
DESTDIR ?=
BUILD   ?= build
BIN     ?= pmcsh

CC      ?= cc
LUA_CFLAGS := $(shell pkg-config --cflags lua5.4)
LUA_LIBS   := $(shell pkg-config --libs lua5.4)
RL_LIBS    := $(shell pkg-config --libs readline 2>/dev/null || echo -lreadline)

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -pthread -fno-strict-aliasing
# Kernels are the measured code: built like a hand-written STREAM loop.
KCFLAGS ?= -O3 -march=native -g
LDLIBS  += $(LUA_LIBS) $(RL_LIBS) -lpfm -lm -pthread

VERSION := 0.1.0

CORE_SRC := $(wildcard core/*.c)
KERN_SRC := $(wildcard kernels/*.c)
OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o) $(KERN_SRC:%.c=$(BUILD)/%.o)
DEP := $(OBJ:.o=.d)

all: $(BIN)

$(BIN): $(OBJ)
	$(CC) $(CFLAGS) $(LDFLAGS) -rdynamic -o $@ $(OBJ) $(LDLIBS)

$(BUILD)/core/%.o: core/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LUA_CFLAGS) -DPMCSH_VERSION='"$(VERSION)"' -MMD -MP -c -o $@ $<

$(BUILD)/kernels/%.o: kernels/%.c
	@mkdir -p $(@D)
	$(CC) $(KCFLAGS) -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -pthread -MMD -MP -c -o $@ $<

-include $(DEP)

# Dependencies: Debian packages, installed when missing.
PKGS := lua5.4 liblua5.4-dev libreadline-dev libpfm4-dev lua-busted lua-cjson gnuplot-nox
deps:
	@sh .ci/deps.sh $(PKGS)

# The tests: busted with pmcsh itself as the interpreter.
check: $(BIN)
	@./$(BIN) spec/support/run.lua spec

SHARE := $(DESTDIR)$(PREFIX)/share/pmcsh
install: $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE) $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/pmcsh
	cp -R lua scripts events $(SHARE)/
	install -m 644 pmcsh.1 $(DESTDIR)$(PREFIX)/share/man/man1/pmcsh.1

uninstall:
	rm -rf $(DESTDIR)$(PREFIX)/bin/pmcsh $(SHARE) $(DESTDIR)$(PREFIX)/share/man/man1/pmcsh.1

clean:
	rm -rf $(BUILD) $(BIN)

.PHONY: all deps check install uninstall clean
