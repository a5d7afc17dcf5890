# llmkit — build, test, install.
#
#   make                 build lib/libllm.a and bin/llm-*
#   make check           install missing packages, build, run every test (no GPU needed)
#   make check SAN=1     the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   make check-gpu       CUDA ops against the CPU reference (needs a GPU; says "skipped" otherwise)
#   make demo            install missing packages, build, run the sample pipeline end to end
#   make bench           throughput of every tool on the samples, beside its peers where installed
#   make bench-scale     the data pipeline on generated corpora (SCALE_GB="0.5 1 2"; hours)
#   make fuzz            run every fuzz target for FUZZ_SECONDS (default 300)
#   make deps            install the Debian packages llmkit needs (as root), or print the command
#   make install         PREFIX=/usr/local: programs, man pages, bash completion, data files
#                        and pipelines
#
# Build probes (each prints what it found; override on the command line):
#   CUDA=auto|0|1        compile kernels/ with nvcc; 1 fails when nvcc is missing
#   CUDA_ARCH=auto|80,90 GPU compute capabilities to build for; auto: those nvidia-smi
#                        lists, else 90 (H100/H200); 80,90 also runs on A100
#   BLAS=auto|0|1        OpenBLAS for matrix products; 0 uses the portable loops in lib/
#   MPI=auto|0|1         MPI data parallelism in llm-train (Open MPI opened at run time)
#   PORTABLE=1           programs for a machine with only the C/C++ runtimes and the NVIDIA
#                        driver, in build/portable/bin (tests/gpu/build-portable.sh)
#
# Sources are found by wildcard: a new lib/LAYER/NAME.c, tools/llm-NAME.c (and the files of its
# subcommands, tools/llm-NAME/*.c), tests/unit/test_NAME.c, tests/fuzz/fuzz_NAME.c or
# kernels/NAME.cu is built without editing this file.
# See CONTRIBUTING.md for the checklist when adding a tool.

.DEFAULT_GOAL := all
VERSION  := 0.1.0
PREFIX   ?= /usr/local
CUDA     ?= auto
CUDA_ARCH ?= auto
BLAS     ?= auto
MPI      ?= auto
SAN      ?= 0
PORTABLE ?= 0
FUZZ_SECONDS ?= 300

CC       ?= cc
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
OPT      ?= -O2
CFLAGS   ?= $(OPT) -g
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
CPPFLAGS += -Ilib -D_GNU_SOURCE -DLLM_VERSION='"$(VERSION)"'
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) -pthread -fno-strict-aliasing
LDLIBS_DATA := -lzstd -lz -llzma -lbz2 -lpcre2-8 -lutf8proc -lprotobuf-c -lxxhash -larchive -lbrotlidec -ldivsufsort -luchardet
LDLIBS_BASE := -lm -lpthread -ldl

# Quiet build lines ("CC lib/core/io.c"); V=1 shows the commands.
ifneq ($(V),1)
  Q_CC = @echo "  CC      $<";
  Q_FUZZ = @echo "  CC-FUZZ $<";
  Q_NVCC = @echo "  NVCC    $<";
  Q_LD = @echo "  LD      $@";
  Q_AR = @echo "  AR      $@";
endif

# Sanitizer builds live in their own tree so that switching SAN never mixes objects.
ifeq ($(SAN),1)
  ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  LDFLAGS += -fsanitize=address,undefined
  B := build/san
else
  B := build/rel
endif

# PORTABLE=1: the programs for a GPU machine that has the driver and the C and C++ runtimes but
# none of the -dev packages: no OpenBLAS (the CPU reference runs its portable loops; the GPU
# checks' shapes are small), zstd, PCRE2, utf8proc and xxHash linked statically, the CUDA
# runtime statically as always; cuBLASLt, NCCL and MPI are opened at run time anyway. They are
# built in a tree of their own and go to build/portable/bin, leaving bin/ alone.
BINDIR := bin
ifeq ($(PORTABLE),1)
  ifeq ($(SAN),1)
    $(error PORTABLE=1 and SAN=1 do not go together)
  endif
  override BLAS := 0
  PORTABLE_STATIC := -lzstd -lpcre2-8 -lutf8proc -lprotobuf-c -lxxhash
  LDLIBS_DATA := -Wl,-Bstatic $(PORTABLE_STATIC) -Wl,-Bdynamic $(filter-out $(PORTABLE_STATIC),$(LDLIBS_DATA))
  B := build/portable
  BINDIR := $(B)/bin
endif

# Goals that install packages and then start a make of their own (check, demo), or that need
# no build (deps, clean), must not probe: on a fresh machine the probes would run before
# `make deps` has installed what they look for, and their "not found" would stick.
NOPROBE_GOALS := check demo deps clean
ifneq ($(filter-out $(NOPROBE_GOALS),$(or $(MAKECMDGOALS),all)),)

# bin/ holds the programs of the last flavour built (SAN=0 or 1): switching relinks them.
$(shell mkdir -p build && echo '$(SAN)' | cmp -s - build/bin-flavour || echo '$(SAN)' > build/bin-flavour)

# Probes run once per configuration and package state (mk/pkgstate.sh: the installed versions
# of mk/packages.txt), so installing or upgrading a package redoes them; their results land in
# $(B)/config.mk.
PROBE_VARS := CC=$(CC) NVCC=$(NVCC) CUDA=$(CUDA) CUDA_ARCH=$(CUDA_ARCH) BLAS=$(BLAS) MPI=$(MPI)
PKG_STATE := $(shell sh mk/pkgstate.sh)
$(shell mkdir -p $(B) && echo '$(PROBE_VARS) PKGS=$(PKG_STATE)' | cmp -s - $(B)/config.vars || \
	echo '$(PROBE_VARS) PKGS=$(PKG_STATE)' > $(B)/config.vars)
$(B)/config.mk: $(B)/config.vars mk/probe.sh
	@$(PROBE_VARS) sh mk/probe.sh $(B) > $@.tmp && mv $@.tmp $@
-include $(B)/config.mk
endif

CPPFLAGS += $(PROBE_CPPFLAGS)
LDFLAGS  += -Wl,--as-needed
BLAS_LDLIBS = $(PROBE_BLAS_LDLIBS)
LDLIBS    = $(PROBE_LDLIBS) $(BLAS_LDLIBS) $(LDLIBS_DATA) $(LDLIBS_BASE)

LIB_SRC   := $(sort $(wildcard lib/*/*.c))
# SentencePiece's model protobuf (lib/tok/spm.c): C generated by protoc-c from the .proto, for
# every build tree; a part of libllm like the sources of lib/.
SPM_PB    := build/gen/sentencepiece_model.pb-c
LIB_SRC   += $(SPM_PB).c
CPPFLAGS  += -Ibuild/gen
LIB_OBJ   := $(LIB_SRC:%.c=$(B)/%.o)
LIBLLM    := $(B)/libllm.a
TOOL_SRC  := $(sort $(wildcard tools/llm-*.c))
TOOLS     := $(TOOL_SRC:tools/%.c=$(BINDIR)/%)
TOOLSUP_SRC := $(filter-out $(TOOL_SRC),$(wildcard tools/*.c))
TOOLSUP_OBJ := $(TOOLSUP_SRC:%.c=$(B)/%.o)
# A program too big for one file keeps its subcommands in a folder of its name:
# tools/llm-x/*.c are linked into bin/llm-x alone.
TOOLPART_SRC := $(sort $(wildcard tools/llm-*/*.c))
TOOLPART_OBJ := $(TOOLPART_SRC:%.c=$(B)/%.o)
tool_parts = $(filter $(B)/tools/$(1)/%,$(TOOLPART_OBJ))
UNIT_SRC  := $(sort $(wildcard tests/unit/test_*.c))
UNITS     := $(UNIT_SRC:tests/unit/%.c=$(B)/unit/%)
FUZZ_SRC  := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/fuzz/%-replay)
CU_SRC    := $(sort $(wildcard kernels/*.cu))
CU_OBJ    := $(CU_SRC:%.cu=$(B)/%.o)
MAN_PAGES := $(sort $(wildcard man/man1/*.1 man/man5/*.5))

# Only the programs that run models link the CUDA backend; the data tools never wait for nvcc.
# The model programs read no archives (tar, zip): they link without libarchive. They run on GPU
# machines with the CUDA runtime and no -dev packages, so OpenBLAS and the data libraries
# (zstd, zlib, liblzma, libbz2, PCRE2) are linked into them statically where the archives
# exist (mk/probe.sh), and Open MPI
# is opened at run time (lib/model/mpirt.c): they need the C, C++ and CUDA libraries only.
MODEL_PROGS := $(BINDIR)/llm-train $(BINDIR)/llm-eval
$(MODEL_PROGS): LDLIBS_DATA = $(PROBE_MODEL_DATA_LDLIBS)
$(MODEL_PROGS): BLAS_LDLIBS = $(PROBE_BLAS_STATIC)
# llm-eval reads lm-evaluation-harness task YAML (lib/model/task.c): libyaml, static as above.
$(BINDIR)/llm-eval: LDLIBS_DATA += $(if $(wildcard /usr/lib/*/libyaml.a),-l:libyaml.a,-lyaml)

ifeq ($(HAVE_CUDA)$(if $(CU_SRC),1),11)
  LIBCUDA := $(B)/libllmcuda.a
  CUDA_USERS := $(MODEL_PROGS) $(BINDIR)/llm-score $(BINDIR)/llm-tox \
    $(filter $(B)/unit/test_cuda% $(B)/unit/test_train $(B)/unit/test_seqcls,$(UNITS))
  $(CUDA_USERS): $(LIBCUDA)
  $(CUDA_USERS): CUDA_LDLIBS = $(LIBCUDA) $(LIBLLM) $(PROBE_CUDA_LDLIBS)
endif

.PHONY: all deps check test check-gpu demo bench bench-scale fuzz install clean lint-man
.DELETE_ON_ERROR:
.SECONDARY:

all: $(TOOLS) $(if $(filter 1,$(PORTABLE)),,lib/libllm.a) $(LIBCUDA)

# lib/libllm.a is the installed-name view of the archive of the current build tree.
lib/libllm.a: $(LIBLLM)
	@cp $< $@

# Backtracking BPE's encoding loop, a chain of dependent loads, is 2-4% faster on Chinese
# text at -O3 (llm-tokenize, qwen and o200k; no change elsewhere in the tokenizer).
$(B)/lib/tok/bpe_bt.o: OPT = -O3

$(B)/%.o: %.c $(B)/config.mk
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(SPM_PB).c: lib/tok/sentencepiece_model.proto
	@mkdir -p $(@D)
	protoc-c --proto_path=lib/tok --c_out=$(@D) $<
$(SPM_PB).h: $(SPM_PB).c
$(B)/lib/tok/spm.o: $(SPM_PB).h

$(LIBLLM): $(LIB_OBJ)
	@rm -f $@
	$(Q_AR)ar rcs $@ $^

$(B)/kernels/%.o: kernels/%.cu $(B)/config.mk
	@mkdir -p $(@D)
	$(Q_NVCC)$(NVCC) $(NVCCFLAGS) -Ilib -MMD -MP -c $< -o $@

$(LIBCUDA): $(CU_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BINDIR)/%: $(B)/tools/%.o $(TOOLSUP_OBJ) $(LIBLLM) build/bin-flavour
	@mkdir -p $(@D)
	$(Q_LD)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(call tool_parts,$*) $(TOOLSUP_OBJ) $(LIBLLM) \
	  $(CUDA_LDLIBS) $(LDLIBS) -o $@
$(foreach t,$(sort $(patsubst tools/%/,%,$(dir $(TOOLPART_SRC)))),\
  $(eval $(BINDIR)/$(t): $(call tool_parts,$(t))))

$(B)/unit/%: $(B)/tests/unit/%.o $(LIBLLM)
	@mkdir -p $(@D)
	$(Q_LD)$(CC) $(ALL_CFLAGS) $(LDFLAGS) $< $(LIBLLM) $(CUDA_LDLIBS) $(LDLIBS) -o $@

# Fuzz targets: a replay binary (any compiler, runs the committed corpus) and, with clang's
# libFuzzer, a coverage-guided binary built against its own instrumented copy of lib/.
$(B)/fuzz/%-replay: $(B)/tests/fuzz/%.o $(B)/tests/fuzz/replay.o $(LIBLLM)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(B)/tests/fuzz/replay.o: tests/fuzz/replay.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

FZ := build/fuzz
FUZZ_CFLAGS := -std=c11 -O1 -g -pthread -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FZ)/%.o)
$(FZ)/lib/tok/spm.o: $(SPM_PB).h
# The objects record their headers (-MMD). Objects made before they did would stay stale
# when a header changes (a struct grown in a header then overflows in an old harness
# object: a false crash); the stamp, created once where it is missing, rebuilds them.
FUZZ_OBJ := $(FUZZ_LIB_OBJ) $(FUZZ_SRC:tests/fuzz/%.c=$(FZ)/tests/fuzz/%.o)
$(shell test -f $(FZ)/deps.stamp || { mkdir -p $(FZ) && touch $(FZ)/deps.stamp; })
$(FUZZ_OBJ): $(FZ)/%.o: %.c $(FZ)/deps.stamp
	@mkdir -p $(@D)
	$(Q_FUZZ)clang $(CPPFLAGS) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@
$(FZ)/libllm.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(FZ)/bin/%: $(FZ)/tests/fuzz/%.o $(FZ)/libllm.a
	@mkdir -p $(@D)
	$(Q_LD)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ $(LDLIBS) -o $@
FUZZERS := $(FUZZ_SRC:tests/fuzz/%.c=$(FZ)/bin/%)

# The whole suite: unit tests, shell tests, fuzz replay (and a short libFuzzer run where clang
# has it), man page lint. tests/run.sh prints "N passed, N failed" last.
test: all $(UNITS) $(FUZZ_REPLAY) $(if $(filter 1,$(HAVE_LIBFUZZER)),$(FUZZERS))
	@B=$(B) HAVE_LIBFUZZER=$(HAVE_LIBFUZZER) HAVE_CUDA=$(HAVE_CUDA) HAVE_MPI=$(HAVE_MPI) \
	  SAN=$(SAN) sh tests/run.sh

JOBS ?= $(shell nproc 2>/dev/null || echo 2)
check:
	@sh mk/deps.sh
	@$(MAKE) --no-print-directory -j$(JOBS) test

check-gpu: all $(filter $(B)/unit/test_cuda%,$(UNITS))
	@B=$(B) sh tests/gpu/run-checks.sh

deps:
	@sh mk/deps.sh

demo:
	@sh mk/deps.sh
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory -f pipelines/Makefile CONFIG=pipelines/demo.mk demo

bench: all
	@sh bench/run.sh

bench-scale: all
	@sh bench/scale/run.sh

fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do n=$${f##*/}; mkdir -p $(FZ)/corpus/$$n; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -print_final_stats=0 \
	    $(FZ)/corpus/$$n tests/fuzz/corpus/$$n || exit 1; done

# The data the programs find by default (tool_data_path in tools/tool.h) and the pipelines, under
# PREFIX/share/llmkit with their paths in this tree.
DATA_FILES = LICENSE samples/NOTICE $(wildcard samples/wordlists/* samples/stopwords/*) \
	samples/tox/tox.bin samples/tox/NOTICE.md $(wildcard recipes/*) \
	$(wildcard pipelines/*)

# jieba's dictionary for the Chinese segmenter (lib/text/zhseg.h), from Debian's python3-jieba,
# with its licence: installed as PREFIX/share/llmkit/jieba/dict.txt, where the programs look.
JIEBA_DICT ?= /usr/lib/python3/dist-packages/jieba/dict.txt
JIEBA_COPYRIGHT ?= /usr/share/doc/python3-jieba/copyright

# Bash completion of every program, from its option table (mk/completion.sh).
COMPLETIONS := $(TOOL_SRC:tools/%.c=$(B)/completion/%)
$(B)/completion/%: $(BINDIR)/% mk/completion.sh
	@mkdir -p $(@D)
	sh mk/completion.sh $< >$@.tmp && mv $@.tmp $@

install: all $(COMPLETIONS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/man/man5 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(COMPLETIONS) $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 644 $(wildcard man/man1/*.1) $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(wildcard man/man5/*.5) $(DESTDIR)$(PREFIX)/share/man/man5
	@for f in $(DATA_FILES); do \
	  m=644; test -x $$f && m=755; \
	  install -D -m $$m $$f $(DESTDIR)$(PREFIX)/share/llmkit/$$f || exit 1; done
	@test -r $(JIEBA_DICT) || { echo "install: no $(JIEBA_DICT) (make deps installs python3-jieba)" >&2; exit 1; }
	install -D -m 644 $(JIEBA_DICT) $(DESTDIR)$(PREFIX)/share/llmkit/jieba/dict.txt
	install -D -m 644 $(JIEBA_COPYRIGHT) $(DESTDIR)$(PREFIX)/share/llmkit/jieba/copyright

clean:
	rm -rf build bin lib/libllm.a

-include $(LIB_OBJ:.o=.d) $(TOOL_SRC:tools/%.c=$(B)/tools/%.d) $(TOOLSUP_OBJ:.o=.d) \
	$(TOOLPART_OBJ:.o=.d) \
	$(UNIT_SRC:tests/unit/%.c=$(B)/tests/unit/%.d) $(CU_OBJ:.o=.d) \
	$(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/fuzz/%.d) $(B)/tests/fuzz/replay.d \
	$(FUZZ_OBJ:.o=.d)
