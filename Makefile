# One build for everything. `make run` and `make test` install missing
# Debian packages first (scripts/install-deps.sh, a no-op when all is there).
#
#   make            build bin/harness, bin/grpo and the test runner
#   make test       install deps, build, run the whole Check suite
#   make test SAN=1 the same under ASan + UBSan (build in build-san/)
#   make run        install deps, build, run the main job
#   make bench      benchmarks, one JSON object per line

CC      ?= gcc
SAN     ?= 0
PKGS    := libgit2 libseccomp openblas check libcjson
# pkg-config name -> Debian package, for the one-line "missing" message
DEB_libgit2    := libgit2-dev
DEB_libseccomp := libseccomp-dev
DEB_openblas   := libopenblas-dev
DEB_check      := check
DEB_libcjson   := libcjson-dev

ifeq ($(SAN),1)
BUILD   := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD   := build
SANFLAGS :=
endif
BIN     := $(if $(filter 1,$(SAN)),$(BUILD)/bin,bin)

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

CFLAGS  ?= -O2 -g
# -Wno-psabi: gcc notes that passing 64-byte vectors changed ABI in 4.6; the
# AVX-512 helpers of policy/model_simd.h are static inline, never passed across one.
CFLAGS  += -std=c11 -Wall -Wextra -Werror -Wno-psabi -D_GNU_SOURCE -I. -MMD -MP $(SANFLAGS) $(PKG_CFLAGS)
LDFLAGS += $(SANFLAGS)
LDLIBS  := $(PKG_LIBS) -lpthread -lm

MAINS    := harness/main.c grpo/main.c
LIB_SRCS := $(filter-out $(MAINS),$(wildcard common/*.c sandbox/*.c tasks/*.c harness/*.c policy/*.c grpo/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/librl.a

TEST_SRCS := $(wildcard tests/*.c)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)
PROG_SRCS := $(wildcard tests/progs/*.c)
PROGS     := $(PROG_SRCS:tests/progs/%.c=$(BUILD)/progs/%)
BENCH_SRCS := $(wildcard bench/*.c)
BENCHES   := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

BINS := $(BIN)/harness $(if $(wildcard grpo/main.c),$(BIN)/grpo)

.PHONY: all deps check-libs test run bench clean
all: check-libs $(BINS) $(BIN)/check_all $(PROGS)

deps:
	@sh scripts/install-deps.sh

# One line per missing library, naming the Debian package, instead of a
# wall of compiler errors.
check-libs:
	@ok=1; for p in $(PKGS); do \
	  if ! pkg-config --exists $$p 2>/dev/null; then \
	    case $$p in libgit2) d=$(DEB_libgit2);; libseccomp) d=$(DEB_libseccomp);; \
	      openblas) d=$(DEB_openblas);; check) d=$(DEB_check);; libcjson) d=$(DEB_libcjson);; esac; \
	    echo "missing library $$p: install the Debian package $$d (or run: make deps)" >&2; ok=0; fi; \
	done; [ $$ok = 1 ]

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BIN)/harness: $(BUILD)/harness/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BIN)/grpo: $(BUILD)/grpo/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

# Test suites register themselves: any `Suite *NAME_suite(void)` defined in
# tests/ sources is collected into a generated header that check_main.c includes.
$(BUILD)/tests/suites.inc: $(TEST_SRCS)
	@mkdir -p $(dir $@)
	@grep -ho '^Suite \*[a-z0-9_]*_suite(void)' $(filter-out tests/check_main.c,$(TEST_SRCS)) \
	  | sed 's/^Suite \*\([a-z0-9_]*\)(void)/SUITE(\1)/' | sort > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/check_main.o: $(BUILD)/tests/suites.inc
$(BUILD)/tests/check_main.o: CFLAGS += -I$(BUILD)/tests

$(BIN)/check_all: $(TEST_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $< -o $@ -lpthread

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) $< $(LIB) -o $@ $(LDLIBS)

# The whole suite. Check's summary line ends the output.
test: deps
	@$(MAKE) --no-print-directory all
	@RL_BIN=$(BIN) RL_BUILD=$(BUILD) $(BIN)/check_all

run: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/run-demo.sh

bench: deps
	@sh scripts/install-bench-deps.sh || echo "bench: PyTorch baselines unavailable (python3-torch not installed)" >&2
	@$(MAKE) --no-print-directory all $(BENCHES)
	@for b in $(BENCHES); do RL_BIN=$(BIN) RL_BUILD=$(BUILD) $$b || exit 1; done
	@set -- $$($(BUILD)/bench/bench_model --blas-core); got=$$1 want=$$2; \
	if [ -n "$$want" ] && [ "$$want" != - ]; then \
		echo "bench: OpenBLAS runs its $$got kernels on a CPU with $$want's instructions: bench_model again with OPENBLAS_CORETYPE=$$want" >&2; \
		OPENBLAS_CORETYPE=$$want RL_BIN=$(BIN) RL_BUILD=$(BUILD) $(BUILD)/bench/bench_model || exit 1; \
	fi

clean:
	rm -rf build build-san bin

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d)
