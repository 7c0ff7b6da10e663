# One build for everything. `make run` and `make test` install missing
# Debian packages first (scripts/install-deps.sh, a no-op when all is there).
#
#   make            build bin/harness (+ bin/harness-core), bin/grpo, bin/sbx and the test runner
#   make test       install deps, build, check the layers, run the whole Check suite
#   make test SAN=1 the same under ASan + UBSan (build in build-san/)
#   make run        install deps, build, run the main job
#   make bench      benchmarks, one JSON object per line
#   make layers     link each layer's library against only the layers below it

CC      ?= gcc
SAN     ?= 0
PKGS    := libgit2 libseccomp openblas check libcjson libcurl libmicrohttpd
# pkg-config name -> Debian package, for the one-line "missing" message
DEB_libgit2       := libgit2-dev
DEB_libseccomp    := libseccomp-dev
DEB_openblas      := libopenblas-dev
DEB_check         := check
DEB_libcjson      := libcjson-dev
DEB_libcurl       := libcurl4-openssl-dev
DEB_libmicrohttpd := libmicrohttpd-dev

ifeq ($(SAN),1)
BUILD   := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD   := build
SANFLAGS :=
endif
BIN     := $(if $(filter 1,$(SAN)),$(BUILD)/bin,bin)

pkg_cflags = $(shell pkg-config --cflags $(1) 2>/dev/null)
pkg_libs   = $(shell pkg-config --libs $(1) 2>/dev/null)

# MPI is optional (data-parallel `grpo train` under mpirun, grpo/grpo_dp.c):
# found through OpenMPI's compiler wrapper, else pkg-config's ompi; without
# it the build still works and grpo_dp.c says the feature is absent.
MPI_CFLAGS := $(shell mpicc --showme:compile 2>/dev/null || pkg-config --cflags ompi 2>/dev/null)
MPI_LIBS   := $(shell mpicc --showme:link 2>/dev/null || pkg-config --libs ompi 2>/dev/null)
ifneq ($(strip $(MPI_LIBS)),)
MPI_CFLAGS += -DRL_HAVE_MPI
endif

CFLAGS  ?= -O2 -g
# -Wno-psabi: gcc notes that passing 64-byte vectors changed ABI in 4.6; the
# AVX-512 helpers of model/model_simd.h are static inline, never passed across one.
BASE_CFLAGS := -std=c11 -Wall -Wextra -Werror -Wno-psabi -D_GNU_SOURCE -MMD -MP $(SANFLAGS) \
               $(call pkg_cflags,$(PKGS))
# Programs get a DT_NEEDED entry only for the shared libraries they call
# (gcc passes --as-needed by default on Debian, but not under -fsanitize).
LDFLAGS += $(SANFLAGS) -Wl,--as-needed

# ---- layers ---------------------------------------------------------------
# Lowest first. A layer is one directory and one static library; its sources
# see only its own headers and those of the layers it lists below (the
# compiler's include path holds nothing else, so an upward include fails to
# compile), and its library links against only those layers' libraries
# (`make layers` proves it). docs/DEVELOPING.md draws the map.
LAYERS := common sandbox corpus protocol http model policy harness grpo

DEPS_common   :=
DEPS_sandbox  := common
DEPS_corpus   := common
DEPS_protocol := common
DEPS_http     := common
DEPS_model    := common
DEPS_policy   := model http protocol corpus common
DEPS_harness  := policy model http protocol corpus sandbox common
DEPS_grpo     := harness policy model http protocol corpus sandbox common

# System libraries each layer itself calls.
SYS_common   := -lm
SYS_sandbox  := $(call pkg_libs,libseccomp libcjson)
SYS_corpus   := $(call pkg_libs,libcjson)
SYS_protocol := $(call pkg_libs,libcjson)
SYS_http     := $(call pkg_libs,libcurl libmicrohttpd)
SYS_model    := $(call pkg_libs,openblas libcjson) -lm -lpthread
SYS_policy   := $(call pkg_libs,libcjson)
SYS_harness  := $(call pkg_libs,libgit2 libcjson) -lpthread
SYS_grpo     := $(call pkg_libs,libcjson) -lpthread $(MPI_LIBS)

# Program sources (main.c, main_*.c, the subcommands cmd_*.c and common/cmd_subcmd.c)
# stay out of the libraries.
layer_srcs = $(filter-out $(1)/main.c $(wildcard $(1)/main_*.c $(1)/cmd_*.c),$(wildcard $(1)/*.c))
layer_lib  = $(BUILD)/lib/lib$(1).a
# A layer's libraries then the system libraries, highest first, for the linker.
link_libs  = $(foreach l,$(1) $(DEPS_$(1)),$(call layer_lib,$(l))) \
             $(sort $(foreach l,$(1) $(DEPS_$(1)),$(SYS_$(l))))
# The include view of a layer: $(BUILD)/inc/L holds links to L and DEPS_L only.
layer_inc  = $(BUILD)/inc/$(1)/.stamp

LIB_OBJS := $(foreach l,$(LAYERS),$(patsubst %.c,$(BUILD)/%.o,$(call layer_srcs,$(l))))
LIBS     := $(foreach l,$(LAYERS),$(call layer_lib,$(l)))

# The subcommand dispatcher prints the usage: program code every program links.
SUBCMD_OBJ   := $(BUILD)/common/cmd_subcmd.o
HARNESS_OBJS := $(patsubst %.c,$(BUILD)/%.o,harness/main_core.c $(wildcard harness/cmd_*.c) sandbox/cmd_sbx.c) $(SUBCMD_OBJ)
HFRONT_OBJS  := $(BUILD)/harness/main.o $(BUILD)/harness/cmd_exec.o $(BUILD)/sandbox/cmd_sbx.o $(SUBCMD_OBJ)
GRPO_OBJS    := $(patsubst %.c,$(BUILD)/%.o,grpo/main.c $(wildcard grpo/cmd_*.c)) $(SUBCMD_OBJ)
SBX_OBJS     := $(BUILD)/sandbox/main.o $(BUILD)/sandbox/cmd_sbx.o

TEST_SRCS := $(wildcard tests/*.c)
TEST_OBJS := $(TEST_SRCS:%.c=$(BUILD)/%.o)
PROG_SRCS := $(wildcard tests/progs/*.c)
PROGS     := $(PROG_SRCS:tests/progs/%.c=$(BUILD)/progs/%)
BENCH_SRCS := $(wildcard bench/*.c)
BENCHES   := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

BINS := $(BIN)/harness $(BIN)/harness-core $(BIN)/grpo $(BIN)/sbx

.PHONY: all deps check-libs test run bench clean layers layer-cflags loadtest
all: check-libs $(BINS) $(BIN)/check_all $(PROGS)

deps:
	@sh scripts/install-deps.sh
	@sh scripts/install-npm.sh $(BUILD)

# One line per missing library, naming the Debian package, instead of a
# wall of compiler errors.
check-libs:
	@ok=1; for p in $(PKGS); do \
	  if ! pkg-config --exists $$p 2>/dev/null; then \
	    case $$p in libgit2) d=$(DEB_libgit2);; libseccomp) d=$(DEB_libseccomp);; \
	      openblas) d=$(DEB_openblas);; check) d=$(DEB_check);; libcjson) d=$(DEB_libcjson);; \
	      libcurl) d=$(DEB_libcurl);; libmicrohttpd) d=$(DEB_libmicrohttpd);; esac; \
	    echo "missing library $$p: install the Debian package $$d (or run: make deps)" >&2; ok=0; fi; \
	done; [ $$ok = 1 ]

# The include view of each layer.
$(BUILD)/inc/%/.stamp: Makefile
	@rm -rf $(dir $@) && mkdir -p $(dir $@)
	@for d in $* $(DEPS_$*); do ln -s $(CURDIR)/$$d $(dir $@)$$d; done
	@touch $@

define layer_rules
$(BUILD)/$(1)/%.o: $(1)/%.c $(call layer_inc,$(1))
	@mkdir -p $$(dir $$@)
	$$(CC) $$(CFLAGS) $$(BASE_CFLAGS) -I$(BUILD)/inc/$(1) -c $$< -o $$@

$(call layer_lib,$(1)): $(patsubst %.c,$(BUILD)/%.o,$(call layer_srcs,$(1)))
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(foreach l,$(LAYERS),$(eval $(call layer_rules,$(l))))

$(BUILD)/grpo/grpo_dp.o: CFLAGS += $(MPI_CFLAGS)

# The flags a layer's sources compile with (tests/test_layers.c plants an
# upward include and compiles it with these).
layer-cflags:
	@$(MAKE) --no-print-directory $(call layer_inc,$(L)) >/dev/null
	@echo $(CFLAGS) $(BASE_CFLAGS) -I$(BUILD)/inc/$(L)

# Each layer's whole library linked with only the layers below it and their
# system libraries: an unresolved symbol (an upward call) fails the link.
$(BUILD)/layers/main.o: Makefile
	@mkdir -p $(dir $@)
	@echo 'int main(void) { return 0; }' | $(CC) $(CFLAGS) -x c -c - -o $@
layers: $(LIBS) $(BUILD)/layers/main.o
	@$(foreach l,$(LAYERS),$(CC) $(LDFLAGS) $(BUILD)/layers/main.o -Wl,--whole-archive $(call layer_lib,$(l)) -Wl,--no-whole-archive $(call link_libs,$(l)) -o $(BUILD)/layers/$(l) || { echo "layers: lib$(l).a needs a symbol from outside $(l) $(DEPS_$(l))" >&2; exit 1; };)
	@echo "layers: $(words $(LAYERS)) libraries link against only the layers below them"

# `harness` prints its usage and runs `exec` itself (the sandbox command:
# common and sandbox layers only) and executes `harness-core`, which has
# every command, for the others.
$(BIN)/harness: $(HFRONT_OBJS) $(call layer_lib,sandbox) $(call layer_lib,common)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(HFRONT_OBJS) $(call link_libs,sandbox) -o $@

$(BIN)/harness-core: $(HARNESS_OBJS) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(HARNESS_OBJS) $(call link_libs,harness) -o $@

$(BIN)/grpo: $(GRPO_OBJS) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(GRPO_OBJS) $(call link_libs,grpo) -o $@

# The sandbox command alone: the common and sandbox layers, libseccomp and
# cJSON, nothing else (docs/DEVELOPING.md, Binaries).
$(BIN)/sbx: $(SBX_OBJS) $(call layer_lib,sandbox) $(call layer_lib,common)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(SBX_OBJS) $(call link_libs,sandbox) -o $@

# Tests, benchmarks and helper programs see every layer.
$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -I. -c $< -o $@
$(BUILD)/bench/%.o: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(BASE_CFLAGS) -I. -c $< -o $@

# Test suites register themselves: any `Suite *NAME_suite(void)` defined in
# tests/ sources is collected into a generated header that check_main.c includes.
$(BUILD)/tests/suites.inc: $(TEST_SRCS)
	@mkdir -p $(dir $@)
	@grep -ho '^Suite \*[a-z0-9_]*_suite(void)' $(filter-out tests/check_main.c,$(TEST_SRCS)) \
	  | sed 's/^Suite \*\([a-z0-9_]*\)(void)/SUITE(\1)/' | sort > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/check_main.o: $(BUILD)/tests/suites.inc
$(BUILD)/tests/check_main.o: CFLAGS += -I$(BUILD)/tests

# The suite also calls some subcommands in-process.
CMD_OBJS := $(sort $(filter-out %/main.o %/main_core.o,$(HARNESS_OBJS) $(GRPO_OBJS)))
$(BIN)/check_all: $(TEST_OBJS) $(CMD_OBJS) $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(TEST_OBJS) $(CMD_OBJS) $(call link_libs,grpo) $(call pkg_libs,check) -o $@

$(BUILD)/progs/%: tests/progs/%.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $< -o $@ -lpthread

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(filter %.o,$^) $(call link_libs,grpo) -o $@

# bench_rollout starts its servers as the tests do.
$(BUILD)/bench/bench_rollout: $(BUILD)/tests/srvproc.o

# The whole suite. Check's summary line ends the output.
test: deps
	@$(MAKE) --no-print-directory all layers
	@RL_BIN=$(BIN) RL_BUILD=$(BUILD) $(BIN)/check_all

# The environment server under load (scripts/loadtest-env.sh): 1,000
# episodes, 64 open at once, then 1,000 held open at once, on loopback;
# stops by itself.
loadtest: deps
	@$(MAKE) --no-print-directory all
	@sh scripts/loadtest-env.sh $(BIN) 1000 64

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

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(HARNESS_OBJS:.o=.d) $(HFRONT_OBJS:.o=.d) $(GRPO_OBJS:.o=.d) $(SBX_OBJS:.o=.d)
