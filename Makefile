# Accord — one plain GNU Makefile.  Targets: all test asan browser fuzz bench run install deb clean check-style.
# Sources are discovered: every src/**/*.c is part of the binary, every tests/unit/test_*.c
# is a unit-test program, every tests/fuzz/fuzz_*.c a fuzz target.

CC       ?= cc
PREFIX   ?= /usr/local
DESTDIR  ?=
PKGS     := libmicrohttpd jansson yaml-0.1 sqlite3 libsodium libssh libarchive libcurl libgit2 libpq
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo unknown)

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -Werror
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libmicrohttpd, libcurl, libarchive, libssh, libgit2, libpq and SQLite are not linked but
# loaded on demand, by `accord serve` (src/http/mhd.h), the http task
# (src/flow/tasks/curl_api.h), base/pack.c (src/base/archive_api.h), key-pair generation
# (src/crypto/ssh_api.h), repositories (src/git/git_api.h) and the store's backends
# (src/store/pq_api.h, src/store/sqlite_api.h): their relocations and their dependencies
# (GnuTLS, p11-kit, krb5, ldap, sasl, libssl, libxml2, ICU, libstdc++, libcrypto, libssh2,
# mbedTLS, …) would slow down the start of every command and every process runner.  Their
# compile flags stay; the sonames come from the libraries the build compiles against.
PKG_LIBS   := $(filter-out -lmicrohttpd -lcurl -larchive -lssh -lgit2 -lpq -lsqlite3,$(shell pkg-config --libs $(PKGS) 2>/dev/null)) -ldl -lpthread -lm
# The release binary links the three libraries every command uses (jansson, libyaml,
# libsodium) statically when their archives are installed (Debian's -dev packages ship them):
# the dynamic loader then maps and relocates only libc and libm at each start — `accord
# version` 1.0–1.3 → 0.6–0.8 ms of CPU, 117 → 97 page faults (perf stat, bench/flows/startup).
STATIC_LIBS := jansson yaml sodium
STATIC_OK   := $(if $(filter-out /%,$(foreach l,$(STATIC_LIBS),$(shell $(CC) -print-file-name=lib$(l).a))),,yes)
STATIC_LINK := -Wl,-Bstatic $(addprefix -l,$(STATIC_LIBS)) -Wl,-Bdynamic $(filter-out $(addprefix -l,$(STATIC_LIBS)),$(PKG_LIBS))
REL_LIBS    := $(if $(STATIC_OK),$(STATIC_LINK),$(PKG_LIBS))
soname      = $(shell objdump -p $$(pkg-config --variable=libdir $(1) 2>/dev/null)/$(1).so 2>/dev/null | awk '/SONAME/ {print $$2}')
MHD_SONAME := $(call soname,libmicrohttpd)
CURL_SONAME := $(call soname,libcurl)
ARCHIVE_SONAME := $(call soname,libarchive)
SSH_SONAME := $(call soname,libssh)
CRYPTO_SONAME := $(call soname,libcrypto)
GIT2_SONAME := $(call soname,libgit2)
PQ_SONAME := $(call soname,libpq)
SQLITE_SONAME := $(call soname,libsqlite3)
ZLIB_SONAME := $(call soname,libz)
# OpenLDAP's client (src/base/ldap_api.h): its pkg-config name is ldap, its file libldap.so.
LDAP_SONAME := $(shell objdump -p $$(pkg-config --variable=libdir ldap 2>/dev/null)/libldap.so 2>/dev/null | awk '/SONAME/ {print $$2}')
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -Isrc -Ibuild/gen $(WARN) $(PKG_CFLAGS) -MMD -MP \
  -DMHD_SONAME='"$(or $(MHD_SONAME),libmicrohttpd.so.12)"' -DCURL_SONAME='"$(or $(CURL_SONAME),libcurl.so.4)"' \
  -DARCHIVE_SONAME='"$(or $(ARCHIVE_SONAME),libarchive.so.13)"' -DSSH_SONAME='"$(or $(SSH_SONAME),libssh.so.4)"' \
  -DCRYPTO_SONAME='"$(or $(CRYPTO_SONAME),libcrypto.so.3)"' \
  -DGIT2_SONAME='"$(or $(GIT2_SONAME),libgit2.so.1.5)"' -DPQ_SONAME='"$(or $(PQ_SONAME),libpq.so.5)"' \
  -DSQLITE_SONAME='"$(or $(SQLITE_SONAME),libsqlite3.so.0)"' -DZLIB_SONAME='"$(or $(ZLIB_SONAME),libz.so.1)"' -DLDAP_SONAME='"$(or $(LDAP_SONAME),libldap-2.5.so.0)"'

SRC      := $(shell find src -name '*.c' | sort)
LIB_SRC  := $(filter-out src/main.c,$(SRC))
SCHEMA   := $(sort $(wildcard src/store/schema/*.sql))
GEN      := build/gen/schema_sql.c
# The console: every file under web/ (and its folders, whose times change when a file is
# added or removed) embedded by scripts/embed-web.
WEB      := $(shell find web -type f ! -name '.*' | sort) $(shell find web -type d)
WEB_GEN  := build/gen/web_assets.c
# The script engines' shims (src/runner/shims/), embedded by scripts/embed-shims.
SHIMS    := $(sort $(wildcard src/runner/shims/shim.*))
SHIMS_GEN := build/gen/script_shims.c
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))

# Three flavours, each in its own object tree.
REL_DIR  := build/release
ASAN_DIR := build/asan
FUZZ_DIR := build/fuzz
# The optimised build's debug information is line tables and function descriptions (-g1),
# as the sanitizer build's below: perf and gdb backtraces keep every function and file:line,
# inlined frames included, and its compile takes 19% less CPU (60.5 → 49.1 CPU-s on a clean
# clone, bench/RESULTS.md session 30); `make REL_G=-g` for local variables in gdb.
REL_G       ?= -g1
REL_CFLAGS  := $(BASE_CFLAGS) -O2 $(REL_G) -DNDEBUG
# The sanitizer build's debug information is line tables only (-g1): ASan's and UBSan's
# reports keep every frame's function and file:line, inlined frames included, and its
# compile costs ~18% less CPU (no variable tracking, smaller objects to assemble and link;
# bench/RESULTS.md "The browser suite's and the build's CPU").  Debugging it with gdb shows
# no local variables: `make asan ASAN_G=-g` for that.
ASAN_G      ?= -g1
ASAN_CFLAGS := $(BASE_CFLAGS) -O1 $(ASAN_G) -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
# Its ~80 links (the server, the unit tests, the fuzz replays) with gold when binutils has
# it: 15–45% less CPU per link than the default linker (same bench entry).
ASAN_LD     := $(if $(shell command -v ld.gold 2>/dev/null),-fuse-ld=gold)
ASAN_LDFLAGS := -fsanitize=address,undefined $(ASAN_LD)

.PHONY: check-style release all asan test unit unit-pg flows flows-server flows-pg apitest multinode apitest-pg browser fuzz bench run install deb clean deps format
all: build/accord

# ---- generated sources -----------------------------------------------------------
# build/gen/version.h is rewritten only when the version changes, so a commit rebuilds
# just the files that show the version.
VERSION_H := build/gen/version.h
$(shell mkdir -p build/gen; printf '#define ACCORD_VERSION "%s"\n' '$(VERSION)' > build/gen/version.h.new; \
  cmp -s build/gen/version.h.new build/gen/version.h || mv build/gen/version.h.new build/gen/version.h; rm -f build/gen/version.h.new)
# The folders too: a removed migration changes its time, not any remaining file's.
$(GEN): $(SCHEMA) src/store/schema scripts/embed-sql
	@mkdir -p $(@D)
	scripts/embed-sql src/store/schema > $@.tmp && mv $@.tmp $@
$(SHIMS_GEN): $(SHIMS) src/runner/shims scripts/embed-shims
	@mkdir -p $(@D)
	@echo "EMBED src/runner/shims/"; scripts/embed-shims src/runner/shims > $@.tmp && mv $@.tmp $@
$(WEB_GEN): $(WEB) scripts/embed-web
	@mkdir -p $(@D)
	@echo "EMBED web/"; scripts/embed-web web > $@.tmp && mv $@.tmp $@

# ---- release ------------------------------------------------------------------------
# The objects a process's runner executes (runner/, flow/, base/) are linked first: a runner,
# forked from the zygote, maps the binary's text and constants anew by page faults (fork
# copies no page tables of file mappings), 64 kB around each, so the fewer 64 kB windows its
# code and constants span, the fewer faults (bench/RESULTS.md "the zygote's and runners' CPU").
RUNNER_FIRST := src/runner/% src/flow/% src/base/%
REL_OBJ := $(patsubst src/%.c,$(REL_DIR)/%.o,$(filter $(RUNNER_FIRST),$(SRC)) $(filter-out $(RUNNER_FIRST),$(SRC))) \
  $(REL_DIR)/gen/schema_sql.o $(REL_DIR)/gen/web_assets.o $(REL_DIR)/gen/script_shims.o
$(REL_DIR)/%.o: src/%.c | $(GEN)
	@mkdir -p $(@D)
	@echo "CC $<"; $(CC) $(REL_CFLAGS) -c $< -o $@
$(REL_DIR)/gen/%.o: build/gen/%.c
	@mkdir -p $(@D)
	@echo "CC $<"; $(CC) $(REL_CFLAGS) -c $< -o $@
build/accord: $(REL_OBJ)
	@echo "LINK $@"; $(CC) -o $@ $^ $(REL_LIBS)

# ---- sanitizers -----------------------------------------------------------------------
ASAN_OBJ := $(patsubst src/%.c,$(ASAN_DIR)/%.o,$(SRC)) $(ASAN_DIR)/gen/schema_sql.o $(ASAN_DIR)/gen/web_assets.o $(ASAN_DIR)/gen/script_shims.o
ASAN_LIB_OBJ := $(filter-out $(ASAN_DIR)/main.o,$(ASAN_OBJ))
$(ASAN_DIR)/%.o: src/%.c | $(GEN)
	@mkdir -p $(@D)
	@echo "CC(asan) $<"; $(CC) $(ASAN_CFLAGS) -c $< -o $@
$(ASAN_DIR)/gen/%.o: build/gen/%.c
	@mkdir -p $(@D)
	@echo "CC(asan) $<"; $(CC) $(ASAN_CFLAGS) -c $< -o $@
$(ASAN_DIR)/accord: $(ASAN_OBJ)
	@echo "LINK $@"; $(CC) $(ASAN_LDFLAGS) -o $@ $^ $(PKG_LIBS)
$(ASAN_DIR)/libaccord.a: $(ASAN_LIB_OBJ)
	@rm -f $@ && ar rcs $@ $^
asan: $(ASAN_DIR)/accord

# ---- unit tests (cmocka) ---------------------------------------------------------------
UNIT_BIN := $(patsubst tests/unit/%.c,$(ASAN_DIR)/tests/%,$(UNIT_SRC))
# Some tests call SQLite directly to set up or inspect a database: they link it, and
# dlopen (store/sqlite_api.c) then finds that same copy already loaded.
$(ASAN_DIR)/tests/%: tests/unit/%.c $(ASAN_DIR)/libaccord.a
	@mkdir -p $(@D)
	@echo "LINK $@"; $(CC) $(ASAN_CFLAGS) -MF $@.d -o $@ $< $(ASAN_DIR)/libaccord.a $(ASAN_LDFLAGS) $(PKG_LIBS) -lsqlite3 -lcmocka \
	  $(UNIT_LDFLAGS)
# Allocation-failure testing: Accord's own allocations go through the test's wrappers.
$(ASAN_DIR)/tests/test_alloc_fail: UNIT_LDFLAGS := \
  -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup
# Tests that count calls across modules instead of timing them.
$(ASAN_DIR)/tests/test_cron: UNIT_LDFLAGS := -Wl,--wrap=tz_offset
$(ASAN_DIR)/tests/test_crypto: UNIT_LDFLAGS := -Wl,--wrap=keypair_generate_cancellable

# test_repo runs the fetch child, which is the accord binary (`accord git-fetch`).
$(ASAN_DIR)/tests/test_repo: $(ASAN_DIR)/accord

# Each suite is run by scripts/run-suites, which knows its command: `make SUITE` runs one,
# `make test` all of them side by side.  unit-pg: the unit tests of the store's users again
# on PostgreSQL; flows-server and flows-pg: the flow fixtures as processes of one real
# `accord serve` (tests/flows/server.py) on SQLite and on PostgreSQL; apitest-pg: the API
# suite on PostgreSQL (tests that look at the SQLite file itself are skipped there); browser:
# the console in a headless Chromium (screenshots and browser logs of failed tests land in
# build/test-artifacts/browser/).  The PostgreSQL suites run on a throwaway cluster
# (scripts/pg-cluster), one database per server.  release: the optimised build/accord of
# `make run` builds (its -O2 warnings are errors too), with the zygote, recovery and
# confinement API tests run on it (scripts/run-suites RELEASE_TESTS).
SUITES := apitest-pg apitest flows-pg flows-server browser unit-pg unit flows check-style release
unit unit-pg: $(UNIT_BIN)
flows flows-server flows-pg apitest apitest-pg browser: $(ASAN_DIR)/accord
unit unit-pg flows flows-server flows-pg apitest apitest-pg browser release:
	@scripts/run-suites $@

# Several nodes on one PostgreSQL database, in a throwaway cluster (apitest-pg runs it too).
multinode: $(ASAN_DIR)/accord
	@scripts/pg-cluster run env ACCORD_BIN=$(CURDIR)/$(ASAN_DIR)/accord /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/api/test_nodes.py

NPROC := $(shell nproc 2>/dev/null || echo 2)
# Build everything once, in parallel (with FUZZ_REPLAY=1 the fuzz targets' replays too,
# REPLAY_BIN: their seed corpora are one more suite, as .ci/run asks), then run the suites side by side,
# TEST_JOBS at once (default: all; scripts/run-suites prints each suite's time at the end).
TEST_JOBS ?= 0
# What the suites need is installed first (scripts/deps: only what is missing), so that
# `make test` works on a fresh machine as the README says.
test:
	@scripts/deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(ASAN_DIR)/accord $(UNIT_BIN) $(if $(FUZZ_REPLAY),$(REPLAY_BIN))
	@scripts/run-suites -j $(TEST_JOBS) $(SUITES) $(if $(FUZZ_REPLAY),fuzz)

# Calls STYLE.md bans (strcpy, sprintf, atoi, raw strtol, …) and unchecked snprintf refused
# in src/ and the tests (the checker tests itself first: scripts/check-style --self-test).
check-style:
	@scripts/check-style

# ---- fuzzing (clang + libFuzzer) -----------------------------------------------------------
FUZZ_CFLAGS := $(BASE_CFLAGS) -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -Wno-error -Wno-unknown-warning-option
FUZZ_LIB_OBJ := $(patsubst src/%.c,$(FUZZ_DIR)/%.o,$(LIB_SRC)) $(FUZZ_DIR)/gen/schema_sql.o $(FUZZ_DIR)/gen/web_assets.o $(FUZZ_DIR)/gen/script_shims.o
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/bin/%,$(FUZZ_SRC))
FUZZ_SECONDS ?= 30
$(FUZZ_DIR)/%.o: src/%.c | $(GEN)
	@mkdir -p $(@D)
	@echo "CC(fuzz) $<"; clang $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_DIR)/gen/%.o: build/gen/%.c
	@mkdir -p $(@D)
	@echo "CC(fuzz) $<"; clang $(FUZZ_CFLAGS) -c $< -o $@
$(FUZZ_DIR)/libaccord.a: $(FUZZ_LIB_OBJ)
	@rm -f $@ && ar rcs $@ $^
$(FUZZ_DIR)/bin/%: tests/fuzz/%.c $(FUZZ_DIR)/libaccord.a
	@mkdir -p $(@D)
	@echo "LINK $@"; clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_DIR)/libaccord.a $(PKG_LIBS)
fuzz:
	@$(MAKE) --no-print-directory -j$(NPROC) $(FUZZ_BIN)
	@scripts/run-fuzz $(FUZZ_SECONDS) $(FUZZ_BIN)

# The same targets without libFuzzer, over the ASan+UBSan library the unit tests link: each
# replays its seed corpus (tests/fuzz/replay/main.c), the `fuzz` suite of make test
# FUZZ_REPLAY=1 — CI's replay then needs no second build of the whole tree with clang.
REPLAY_BIN := $(patsubst tests/fuzz/%.c,$(ASAN_DIR)/fuzz-replay/%,$(FUZZ_SRC))
# Their shared main, compiled once.
REPLAY_MAIN := $(ASAN_DIR)/fuzz-replay/main.o
$(REPLAY_MAIN): tests/fuzz/replay/main.c
	@mkdir -p $(@D)
	@echo "CC(asan) $<"; $(CC) $(ASAN_CFLAGS) -c $< -o $@
$(ASAN_DIR)/fuzz-replay/%: tests/fuzz/%.c $(REPLAY_MAIN) $(ASAN_DIR)/libaccord.a
	@mkdir -p $(@D)
	@echo "LINK $@"; $(CC) $(ASAN_CFLAGS) -MF $@.d -o $@ $< $(REPLAY_MAIN) $(ASAN_DIR)/libaccord.a \
	  $(ASAN_LDFLAGS) $(PKG_LIBS)

# ---- the rest ---------------------------------------------------------------------------------
bench: build/accord
	@for b in bench/*/run; do echo "== $$b"; $$b || exit 1; done

deps:
	scripts/deps

# Only what building and running need (scripts/deps --run); `make test` installs the rest.
run:
	scripts/deps --run
	$(MAKE) build/accord
	./build/accord serve

# The binary, the systemd unit accord.service, /etc/default/accord (kept when present), a
# sysusers.d entry and the docs (packaging/install; docs/operations.md "Installing").
install: build/accord
	DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' BIN=build/accord packaging/install

# A Debian package in build/ (packaging/build-deb: dpkg-deb, maintainer scripts in packaging/deb).
deb: build/accord
	BIN=build/accord packaging/build-deb build

format:
	clang-format -i $(shell find src tests -name '*.[ch]')

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
