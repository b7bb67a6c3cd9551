# SPDX-License-Identifier: Apache-2.0
# sonde: plain Makefile. `make` builds build/sonde; `make test` installs what
# the tests need, builds (normal and sanitizer builds) and runs every test.
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wno-unused-parameter
CPPFLAGS:= -std=gnu11 -D_GNU_SOURCE -Isrc -Ibuild/gen
# libcrypt: sonde serve's basic auth (bcrypt); its TLS opens libssl.so.3 at run time
# (src/serve/openssl.h), so that no other command pays for loading it
LDLIBS  := -lbpf -lelf -lz -liberty -lcrypt
PREFIX  ?= /usr/local

SRCS     := $(sort $(wildcard src/*.c src/*/*.c src/*/*/*.c))
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
# The tools (tools/*.bt) are embedded: build/gen/tools.S pulls each file in
# with .incbin, build/gen/tool_table.c lists them for src/toolkit/.
TOOLS    := $(sort $(wildcard tools/*.bt))
TOOL_NAMES := $(TOOLS:tools/%.bt=%)
GEN_OBJS := build/obj/gen/tools.o build/obj/gen/tool_table.o
OBJS     := $(SRCS:%.c=build/obj/%.o) $(GEN_OBJS)
LIB_OBJS := $(LIB_SRCS:%.c=build/obj/%.o) $(GEN_OBJS)
ASAN_OBJS:= $(SRCS:%.c=build/asan/obj/%.o) $(GEN_OBJS:build/obj/%=build/asan/obj/%)
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# syscall_name()'s table, from this architecture's syscall numbers
MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
UNISTD_H ?= /usr/include/$(MULTIARCH)/asm/unistd_64.h
GEN_HDRS := build/gen/syscall_names.h

UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=build/tests/%)

.PHONY: all test test-unit test-vm bench bench-quick install man clean deps asan fuzz

all: build/sonde

build/sonde: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

build/obj/%.o: %.c $(wildcard src/*/*.h src/*/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c -o $@ $<

build/gen/tools.S: $(TOOLS) Makefile
	@mkdir -p $(dir $@)
	@{ echo '	.section .rodata'; \
	  for t in $(TOOL_NAMES); do \
	    echo "	.global tool_text_$$t"; echo "tool_text_$$t:"; \
	    echo "	.incbin \"tools/$$t.bt\""; echo '	.byte 0'; \
	  done; \
	  echo '	.section .note.GNU-stack,"",@progbits'; } > $@

build/gen/tool_table.c: $(TOOLS) Makefile
	@mkdir -p $(dir $@)
	@{ echo '#include "toolkit/tool.h"'; \
	  for t in $(TOOL_NAMES); do echo "extern const char tool_text_$$t[];"; done; \
	  echo 'const struct tool tool_table[] = {'; \
	  for t in $(TOOL_NAMES); do echo "	{ \"$$t\", tool_text_$$t },"; done; \
	  echo '	{ 0, 0 },'; echo '};'; } > $@

build/obj/gen/%.o: build/gen/%.S
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ $<

build/asan/obj/gen/%.o: build/gen/%.S
	@mkdir -p $(dir $@)
	$(CC) -c -o $@ $<

build/obj/gen/%.o: build/gen/%.c $(wildcard src/*/*.h src/*/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -Wno-missing-prototypes -c -o $@ $<

build/asan/obj/gen/%.o: build/gen/%.c $(wildcard src/*/*.h src/*/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ASAN_FLAGS) $(WARN) -Wno-missing-prototypes -c -o $@ $<

build/gen/syscall_names.h: $(UNISTD_H)
	@mkdir -p $(dir $@)
	sed -n 's/^#define __NR_\([a-z0-9_]*\)[ \t]*\([0-9][0-9]*\)$$/\t[\2] = "\1",/p' $< > $@.tmp
	mv $@.tmp $@

build/obj/src/common/names.o build/asan/obj/src/common/names.o build/fuzz/obj/src/common/names.o: $(GEN_HDRS)

# the SVGs' scripts are pulled into scripts.o with .incbin
build/obj/src/render/scripts.o build/asan/obj/src/render/scripts.o build/fuzz/obj/src/render/scripts.o: \
	$(wildcard src/render/*.js)

asan: build/asan/sonde
build/asan/sonde: $(ASAN_OBJS)
	$(CC) $(ASAN_FLAGS) -o $@ $^ $(LDLIBS)

build/asan/obj/%.o: %.c $(wildcard src/*/*.h src/*/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ASAN_FLAGS) $(WARN) -c -o $@ $<

# The fuzzers (tests/fuzz/fuzz_NAME.c, one per reader of untrusted input:
# the compiler, the renderers' readers, the web config): every source but
# main.c, built by clang with libFuzzer and the sanitizers, linked with the
# same libraries as sonde (so a new library cannot break them unnoticed).
# tests/fuzz/run.sh NAME runs one; `make test` builds them when clang is there.
FUZZ_CC    ?= clang
FUZZ_FLAGS := -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJS  := $(LIB_SRCS:%.c=build/fuzz/obj/%.o) $(GEN_OBJS:build/obj/%=build/fuzz/obj/%)
FUZZ_BINS  := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGET:= $(if $(shell command -v $(FUZZ_CC) 2>/dev/null),$(FUZZ_BINS))

fuzz: $(FUZZ_BINS)
# made through the pattern rule, so make would take them for intermediate
# files and delete them after each build
.SECONDARY: $(FUZZ_OBJS)
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

build/fuzz/obj/%.o: %.c $(wildcard src/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

build/fuzz/obj/gen/%.o: build/gen/%.S
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -c -o $@ $<

build/fuzz/obj/gen/%.o: build/gen/%.c $(wildcard src/*/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<


build/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -Wno-missing-prototypes -o $@ $< $(LIB_OBJS) $(LDLIBS)

deps:
	@sh tests/setup.sh

test: deps all asan $(UNIT_BINS) $(FUZZ_TARGET)
	@python3 tests/run_all.py

test-unit: $(UNIT_BINS)
	@python3 tests/run_all.py --only unit

# kprobe/kretprobe/fentry/fexit tests (tests/vm/*.test) in a QEMU guest
# running Debian's 6.1 kernel (this host's kernel lacks them); see
# tests/vm/README.md. tests/vm/selftest.sh checks the guest harness itself.
test-vm: all
	@python3 tests/run_all.py --only vm

# side-by-side benchmarks against bpftrace (bench/README.md); bench-quick is
# the under-three-minutes variant to run before changing hot paths
bench: build/sonde
	python3 bench/run.py

bench-quick: build/sonde
	python3 bench/run.py --quick

# Man pages: sonde(8) is written by hand; sonde-TOOL(8) comes from each
# tool's header (`sonde TOOL --man`).
TOOL_LINKS ?= yes
MAN_PAGES := build/man/sonde.8 $(TOOL_NAMES:%=build/man/sonde-%.8)

man: $(MAN_PAGES)

build/man/sonde.8: docs/sonde.8
	@mkdir -p $(dir $@)
	cp $< $@

build/man/sonde-%.8: tools/%.bt build/sonde
	@mkdir -p $(dir $@)
	build/sonde $* --man > $@.tmp
	mv $@.tmp $@

# Installation: make install / make uninstall (PREFIX, DESTDIR), and make deb
# (build/sonde_VERSION_ARCH.deb). packaging/install.sh holds the one list of
# what goes where: the binary, the man pages, the bash completion and
# (unless TOOL_LINKS=no) a link per tool, so that `execsnoop` runs
# `sonde execsnoop`, with a completion link beside it (TOOL_COMPLETIONS=no
# leaves those out). The version is SONDE_VERSION in src/main.c, which
# `sonde --version` prints; the package takes it from there.
BINDIR      ?= $(PREFIX)/bin
TOOLDIR     ?= $(BINDIR)
MANDIR      ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
TOOL_COMPLETIONS ?= yes
VERSION     := $(shell sed -n 's/^\#define SONDE_VERSION "\(.*\)"$$/\1/p' src/main.c)
DEB_ARCH    := $(shell dpkg --print-architecture 2>/dev/null)
DEB         := build/sonde_$(VERSION)_$(DEB_ARCH).deb
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
# Debian's python3 looks in dist-packages
ifeq ($(PREFIX),/usr)
PYTHONDIR   ?= /usr/lib/python3/dist-packages
else
PYTHONDIR   ?= $(PREFIX)/lib/python3/dist-packages
endif
INSTALL_ENV  = DESTDIR="$(DESTDIR)" PREFIX="$(PREFIX)" BINDIR="$(BINDIR)" TOOLDIR="$(TOOLDIR)" \
	       MANDIR="$(MANDIR)" BASHCOMPDIR="$(BASHCOMPDIR)" TOOL_LINKS="$(TOOL_LINKS)" \
	       TOOL_COMPLETIONS="$(TOOL_COMPLETIONS)" LIBDIR="$(LIBDIR)" INCLUDEDIR="$(INCLUDEDIR)" \
	       PYTHONDIR="$(PYTHONDIR)"

.PHONY: uninstall deb

install: build/sonde man usdt-lib
	@$(INSTALL_ENV) sh packaging/install.sh install $(TOOL_NAMES)

uninstall:
	@$(INSTALL_ENV) sh packaging/install.sh uninstall $(TOOL_NAMES)

deb: $(DEB)

$(DEB): build/pkg/sonde man completion/sonde.bash packaging/install.sh packaging/deb.sh \
	$(wildcard packaging/debian/*)
	@sh packaging/deb.sh build/pkg/sonde "$(VERSION)" "$(DEB_ARCH)" $@ $(TOOL_NAMES)

# The packaged binary: build/sonde's objects linked with full RELRO (symbols
# bound at start, the tables read-only after), as Debian's hardening asks.
build/pkg/sonde: $(OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wl,-z,relro,-z,now -o $@ $^ $(LDLIBS)

clean:
	rm -rf build

# ---- libsonde-usdt (lib/usdt/, see its README): USDT probes defined at run
# time, with a Python binding. Independent of sonde: its own sources and flags.
USDT_SO   := build/lib/libsonde-usdt.so
USDT_A    := build/lib/libsonde-usdt.a
USDT_HDR  := lib/usdt/include/sonde/usdt.h
USDT_FLAGS:= -std=gnu11 -O2 -g -fPIC -Ilib/usdt/include $(WARN)

.PHONY: usdt-lib
all: usdt-lib
usdt-lib: $(USDT_SO) $(USDT_A)

build/lib/usdt.o: lib/usdt/usdt.c $(USDT_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(USDT_FLAGS) -c -o $@ $<

$(USDT_SO): build/lib/usdt.o
	$(CC) -shared -o $@ $<

$(USDT_A): build/lib/usdt.o
	rm -f $@
	ar rcs $@ $<
