# attnlab — build, test and grade. `make help` lists the targets.
#
#   make taskN [IMPL=skeleton|reference] [SUITE=…]   build and run Task N's tests (default: your skeleton)
#   make grade [IMPL=…] [TASK=N]                     grade every task → Results.md, results.json (TASK=N: build/grade-taskN/)
#   make bench-task2 | bench-task4 | bench-task5 | bench-task6   benchmarks (GPU)
#   make profile-task2 | profile-task4 | profile-task5              Nsight Compute on your kernel: a summary + the .ncu-rep (GPU)
#   make sanitize-task2 | sanitize-task4 | sanitize-task5           compute-sanitizer on your kernels' small shapes (GPU)
#   make asan-task1 | asan-task3 [ARGS=step]        your CPU task's functions in one process under AddressSanitizer + UBSan
#   make gdb-task1 | gdb-task3 [ARGS=step]          the same in gdb: a crash stops at its line (bt: the calls)
#   make task4-bf16 [IMPL=…] [SUITE=…] | bench-task4-bf16   Task 4's bf16 bonus: its tests (GPU) | TFLOP/s
#   make task4-backward [IMPL=…] [SUITE=…] | bench-task4-backward   Task 4's backward bonus: its tests (GPU) | TFLOP/s
#   make task4-bf16-backward [IMPL=…] [SUITE=…] | bench-task4-bf16-backward   Task 4's bf16 backward bonus (GPU) | TFLOP/s
#   make test                                        what CI runs: deps, goldens, both sides, controls
#   make release | check-release                     the student kit: build/release/attnlab-kit(.tar.gz) (course repository only)
#   make tune-task4 | ladder-task2 | ladder-task4 | ladder-task5 | reference-times   staff tools (course repository only)
#   make task7 PROMPT="…" TOKENS=50                 GPT-2 on your kernels (make model first: the default model)
#   make python [IMPL=…]                            the Python bridge: build/<impl>/python/libattnlab.so (python/attnlab)
#   make torch-speedups | hf-attnlab [IMPL=…]        (GPU, CUDA torch) your kernels against torch into Results.md; HF models on them
#   make train-attnlab [IMPL=…] [TRAIN_ARGS=…]      (GPU, CUDA torch) Task 7's model trained on your 4c (or 4d: TRAIN_ARGS="--precision bf16") beside SDPA
#   make model | goldens | deps | setup | skeleton | check-skeleton | protect | check-protected | clean
#   builds run JOBS=$(nproc) jobs and print one line a step; V=1 prints the full commands
IMPL      ?= skeleton
BUILD     ?= build/$(IMPL)
COMMON    := build/common
PYTHON    ?= /usr/bin/python3
OUT       ?= .
CXX       ?= g++
# A compiler cache for the compiles (not links), empty by default: `make test` sets CCACHE=ccache with a cache of its
# own in build/ccache, so that the kit's build and the controls reuse the reference build's objects. Class grading
# never uses one (tools/class/batch_grade.py sets CCACHE= for every student build: no cache shared between students).
CCACHE    ?=
CUDA_HOME ?= /usr/local/cuda
# nvcc from PATH, else CUDA_HOME's (a toolkit installed but not on PATH); looked up once.
ifndef NVCC
NVCC := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc),nvcc)
endif
# sm_80 (A100) and sm_90 (H100/H200) machine code, plus PTX for anything newer.
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
             -gencode arch=compute_90,code=compute_90
# Files with Hopper-only instructions (wgmma, setmaxnreg exist only for the sm_90a target): sm_80 + sm_90a, not sm_90
# beside sm_90a (which would leave the loader to pick between the two images), and ATTNLAB_SM90A=1, by which their
# host code knows that the sm_90a kernels are in the binary (each dispatches on the GPU's compute capability, 9.0 only).
HOPPER_ARCH := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a
%/flash_attention_bf16_sm90.o %/flash_attention_bf16_backward_sm90.o: override CUDA_ARCH := $(HOPPER_ARCH)
%/flash_attention_bf16_sm90.o %/flash_attention_bf16_backward_sm90.o: NVCCFLAGS += -DATTNLAB_SM90A=1

CXXFLAGS  ?= -O2 -g
# -fPIC everywhere: the Python bridge (make python) links the same objects as the tests into a shared library.
CXXFLAGS  += -std=c++17 -fPIC -Wall -Wextra -I. -I$(CUDA_HOME)/include -DATTNLAB_ROOT='"$(CURDIR)"' -MMD -MP
NVCCFLAGS ?= -O3 -lineinfo
NVCCFLAGS += -std=c++17 $(CUDA_ARCH) -I. -Xcompiler -fPIC,-Wall,-Wextra -MMD -MP
LDLIBS    += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublas -lcudart -lpcre2-8 -lpthread

# Parallel builds for make taskN and make grade (the jobs a student's machine has).
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CPU_TASKS := 1 3
GPU_TASKS := 2 4 5 6 7
DRIVE_TASKS := 2 4 5
TASKS     := $(sort $(CPU_TASKS) $(GPU_TASKS))
# A task's folders: taskN, and for Tasks 4, 5 and 6 their bonus parts, each a room of its own (README "Layout").
# runner_task4 serves all four (runner_task5 and runner_task6 both parts of theirs); each folder brings its operations (serve.cpp), trusted-side
# stand-ins (remote.cpp) and null functions (null_submission.cpp).
TASK4_PARTS := task4 task4_bf16 task4_backward task4_bf16_backward
TASK5_PARTS := task5 task5_paged
TASK6_PARTS := task6 task6_serve
task_dirs    = $(or $(TASK$(1)_PARTS),task$(1))
# Each task's implementation: <folder>/$(IMPL)/*.{cpp,cu} unless TASKn_SRC says otherwise (controls do).
$(foreach t,$(TASKS),$(eval TASK$(t)_SRC ?= $$(wildcard $$(foreach d,$$(call task_dirs,$(t)),$$(d)/$$(IMPL)/*.cpp $$(d)/$$(IMPL)/*.cu))))

# The student kit (make release) has no reference: benchmarks then use the student's own code as
# their baselines, and the grader gives no performance credit locally (the course's grader does).
HAVE_REFERENCE := $(if $(wildcard task4/reference/*.cu),yes,)
ref_or_own = $(if $(HAVE_REFERENCE),build/reference/$(1),$(call obj_impl,$(2)))
ifeq ($(IMPL)$(HAVE_REFERENCE),reference)
$(error IMPL=reference needs the course repository: the student kit has no model solutions (taskN/reference/); run your own with IMPL=skeleton, the default)
endif

# Files a task links besides its implementation (harness-side, not the student's), and the other
# tasks whose implementation it builds on (Task 6 runs the student's Task-4 and Task-5 kernels).
TASK4_EXTRA := task4/tuning.cpp
TASK6_EXTRA := task4/tuning.cpp task6/model.cpp task6/timing.cpp task6_serve/serving_model.cpp
TASK6_USES  := 4 5
# Task 7 has nothing of the student's own: GPT-2 runs on their Tasks 4, 5 and 6.
TASK7_EXTRA := task4/tuning.cpp task7/tokenizer.cpp task7/gpt2.cpp
TASK7_USES  := 4 5 6
task_impl_src = $(foreach u,$(TASK$(1)_USES) $(1),$(TASK$(u)_SRC))

# The CPU tasks' harness needs no CUDA toolkit: plain g++, no cuBLAS or cudart (a student without a GPU builds Tasks 1
# and 3 with packages alone). Every other program links the whole harness.
HARNESS_CPU_SRC := common/fmt_impl.cpp common/tensor.cpp common/safetensors.cpp common/compare.cpp common/check.cpp common/diagnose.cpp \
                   common/diagnose_kernels.cpp common/diagnose_backward.cpp \
                   common/cases.cpp common/golden.cpp common/cpu_ops.cpp common/seed.cpp \
                   common/remote/wire.cpp common/remote/runner.cpp common/remote/sandbox.cpp common/remote/launch_log.cpp
HARNESS_SRC := $(HARNESS_CPU_SRC) common/remote/device_copy.cpp \
               common/cuda/cuda_check.cpp common/cuda/device.cpp common/cuda/gpu_case.cpp common/cuda/bench.cpp common/cuda/gpu_wait.cu common/cuda/read_stream.cu \
               common/cuda/cublas_gemm.cpp common/cuda/fill.cu common/cuda/attention_oracle.cu common/cuda/gpu_compare.cu common/cuda/bf16_tensor.cpp common/cuda/bf16_convert.cu \
               common/llm/kernels.cu common/llm/gqa_kernels.cu common/llm/phase_timer.cpp common/llm/skinny_gemm.cu common/llm/greedy_check.cpp \
               common/llm/history.cpp common/llm/utf8.cpp \
               common/cuda/memory_watch.cpp common/cuda/digest.cu common/llm/remote_model.cpp

# A runner (build/<impl>/bin/runner_taskN) is the only program that holds student code: the channel,
# device staging, the task's operations (taskN/serve.cpp) and what the student's code may call.
# No oracle, no cuBLAS (Tasks 6 and 7: the model's projections need it), nothing that judges.
# Task 6b's serving engine and model: the runner's (they call the student's code) and the benchmark's.
TASK6B_ENGINE := task6_serve/serving_model.cpp task6_serve/serving_paged.cpp task6_serve/engine.cpp
RUNNER_CPU_SRC := common/fmt_impl.cpp common/remote/runner_main.cpp common/remote/serve.cpp common/remote/serve_cpu.cpp common/remote/wire.cpp
RUNNER_GPU_SRC := common/fmt_impl.cpp common/remote/runner_main.cpp common/remote/serve.cpp common/remote/serve_gpu.cpp common/remote/wire.cpp \
                  common/remote/launch_log_runner.cpp \
                  common/cuda/cuda_check.cpp common/cuda/device.cpp common/cuda/fill.cu common/cuda/digest.cu common/cuda/timed_calls.cpp
RUNNER_LDLIBS  := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lpthread
runner_ldlibs   = $(if $(filter $(1),$(CPU_TASKS)),-lpthread,$(RUNNER_LDLIBS))
# bf16_convert: the timed calls of 4d and 5b read their bf16 outputs as floats
TASK4_RUNNER_EXTRA := task4/tuning.cpp common/golden.cpp common/safetensors.cpp common/tensor.cpp common/compare.cpp \
                      common/cuda/bf16_convert.cu
TASK5_RUNNER_EXTRA := $(TASK4_RUNNER_EXTRA)
TASK6_MODEL_RUNNER := $(TASK4_RUNNER_EXTRA) task6/model.cpp task6/timing.cpp common/cuda/cublas_gemm.cpp \
                      common/llm/kernels.cu common/llm/gqa_kernels.cu common/llm/phase_timer.cpp common/llm/skinny_gemm.cu \
                      common/llm/history.cpp common/cuda/attention_oracle.cu
TASK6_RUNNER_EXTRA := $(TASK6_MODEL_RUNNER) $(TASK6B_ENGINE)
TASK7_RUNNER_EXTRA := $(TASK6_MODEL_RUNNER) task7/gpt2.cpp common/llm/utf8.cpp
TASK6_RUNNER_LIBS  := -lcublas
TASK7_RUNNER_LIBS  := -lcublas
runner_src = $(if $(filter $(1),$(GPU_TASKS)),$(RUNNER_GPU_SRC),$(RUNNER_CPU_SRC)) $(TASK$(1)_RUNNER_EXTRA) \
             $(wildcard $(addsuffix /serve.cpp,$(call task_dirs,$(1))))
# The null runners (build/common/null-runners/runner_taskN): the same programs with a submission that does
# nothing (taskN/null_submission.cpp) — the harness alone, trusted. The grader measures a submission beside
# them (the harness's own time in a timed request, memory, threads, signal handlers), never beside a
# baseline read from the submission's own process.
NULL_TASKS := $(TASKS)
NULL_RUNNER_DIR := $(COMMON)/null-runners
null_runner = $(NULL_RUNNER_DIR)/runner_task$(1)
null_submission_src = $(foreach u,$(TASK$(1)_USES) $(1),$(wildcard $(addsuffix /null_submission.cpp,$(call task_dirs,$(u)))))
NULL_RUNNERS := $(foreach t,$(NULL_TASKS),$(NULL_RUNNER_DIR)/runner_task$(t))
# The trusted side's stand-ins for the student's functions: each sends its call to the runner.
task_proxy_src = $(foreach u,$(TASK$(1)_USES) $(1),$(wildcard $(addsuffix /remote.cpp,$(call task_dirs,$(u)))))
RUNNER_BIN_DIR ?= $(BUILD)/bin

GRADER_SRC  := grader/isolate.cpp grader/report.cpp grader/rubric.cpp grader/tasks.cpp grader/perf.cpp \
               grader/protected.cpp grader/symbols.cpp grader/timed.cpp grader/node_window.cpp common/cuda/paged_oracle.cu common/cuda/bf16_backward_oracle.cu

# Files a submission must not edit; their sums (grader/protected.sha256) are compiled into the grader.
# (The kit ships all of them; staff-only tools are not among them.)
PROTECTED = $(sort $(wildcard common/*.h common/*.cpp common/cuda/*.h common/cuda/*.cpp common/cuda/*.cu common/llm/* task6/model.* task6/timing.* \
              task7/tokenizer.* task7/gpt2.* \
              task6_serve/serving_model.* task6_serve/serving_paged.cpp task6_serve/engine.* task*/timed_inputs.h \
              grader/*.h grader/*.cpp grader/rubric.json task*/task*.h task*/variants.h task*/cases*.h task*/cases*.cpp \
              task*/test_task*.cpp task*/null_submission.cpp task*/bench_*.cpp task*/tune_*.cpp task4/tuning.* task*/remote.cpp task*/serve.cpp common/remote/*) \
              $(wildcard prebuilt/common/*.o prebuilt/common/cuda/*.o) \
              tools/goldens/make_goldens.py tools/goldens/llm_reference.py tools/goldens/train_model.py tools/setup/install_deps.sh tools/setup/fetch_assets.sh tools/ci/run_tests.sh tools/ci/check_grade.py Makefile .ci/run)

obj_common = $(addprefix $(COMMON)/,$(addsuffix .o,$(basename $(1))))
obj_impl   = $(addprefix $(BUILD)/,$(addsuffix .o,$(basename $(1))))
HARNESS_OBJ := $(call obj_common,$(HARNESS_SRC))
HARNESS_CPU_OBJ := $(call obj_common,$(HARNESS_CPU_SRC) common/remote/device_copy_none.cpp)
CPU_LDLIBS := -lpcre2-8 -lpthread
harness_of = $(if $(filter $(1),$(CPU_TASKS)),$(HARNESS_CPU_OBJ),$(HARNESS_OBJ))
ldlibs_of  = $(if $(filter $(1),$(CPU_TASKS)),$(CPU_LDLIBS),$(LDLIBS))
IMPL_OBJ     = $(call obj_impl,$(foreach t,$(TASKS),$(TASK$(t)_SRC)))

.PHONY: task4-bf16 bench-task4-bf16 ladder-task4-bf16 check-ladder-task4-bf16 task4-backward bench-task4-backward ladder-task4-backward \
        ladder-task4-backward-tf32 task4-bf16-backward bench-task4-bf16-backward task5-paged bench-task5-paged \
        task6-serve bench-task6-serve
.PHONY: cuda-toolkit
.PHONY: help all deps setup model python torch-speedups hf-attnlab train-attnlab goldens goldens-if-stale $(foreach t,$(TASKS),goldens-if-stale-task$(t)) test grade grade-build skeleton check-skeleton clean unit grader-gpu-tests protect check-protected \
        release check-release runners reference-times ladder-task2 ladder-task4 ladder-task5 \
        $(foreach t,$(TASKS),task$(t)) bench-task2 bench-task4 bench-task5 bench-task6 tune-task4 \
        $(foreach t,$(DRIVE_TASKS),profile-task$(t) sanitize-task$(t))
.DEFAULT_GOAL := help

# The kit has no staff tools: its help leaves their lines out.
help:
	@awk 'NR >= 3 && !/^#/ {exit} NR >= 3 {print}' Makefile | $(if $(HAVE_REFERENCE),cat,grep -v "course repository only")

# ---- dependencies and goldens --------------------------------------------------------------
deps:
	@bash tools/setup/install_deps.sh

# The set-up `make taskN` does first, for course staff's scripts (tools/gpu/pack_gpu.sh, tools/controls/,
# tools/class/, tools/kit/check_release.sh) and targets: Debian's packages (and Task 7's PyPI assets when Task 7
# is among SETUP_TASKS), then the goldens of SETUP_TASKS (default every task; "none": packages only) where stale.
SETUP_TASKS ?= $(TASKS)
setup_tasks = $(filter $(TASKS),$(SETUP_TASKS))
setup:
	@bash tools/setup/install_deps.sh $(if $(filter 7,$(setup_tasks)),,--packages-only)
	$(if $(setup_tasks),@$(MAKE) --no-print-directory $(if $(filter-out $(setup_tasks),$(TASKS)),$(foreach t,$(setup_tasks),goldens-if-stale-task$(t)),goldens-if-stale))

GOLDEN_SOURCES := tools/goldens/make_goldens.py tools/goldens/llm_reference.py
# tiktoken (in .deps/py, from tools/setup/fetch_assets.sh) gives Task 7's goldens their token ids.
goldens:
	PYTHONPATH=$(CURDIR)/.deps/py $(PYTHON) tools/goldens/make_goldens.py
	@sha256sum $(GOLDEN_SOURCES) > goldens/.stamp

# Regenerates only when the generator changed since the goldens were written, and only the tasks whose goldens
# are stale (`make task1` and `make task3` wrote theirs: `make grade` then makes the others, in one run), or
# those of TASK= when it is given.
golden_tasks = $(or $(TASK),$(TASKS))
goldens-if-stale:
	@if sha256sum -c --status goldens/.stamp 2>/dev/null; then echo "goldens: up to date"; else \
	  stale=""; for t in $(golden_tasks); do sha256sum -c --status goldens/task$$t/.stamp 2>/dev/null || stale="$$stale --only task$$t"; done; \
	  if [ -z "$$stale" ]; then echo "goldens: $(if $(TASK),task$(TASK) )up to date"; \
	  else PYTHONPATH=$(CURDIR)/.deps/py $(PYTHON) tools/goldens/make_goldens.py $$stale && \
	    for t in $$(echo $$stale | sed 's/--only task//g'); do sha256sum $(GOLDEN_SOURCES) > goldens/task$$t/.stamp; done; fi; fi

# One task's goldens (`make taskN`): the rule above for that task alone.
$(foreach t,$(TASKS),goldens-if-stale-task$(t)): goldens-if-stale-task%:
	@$(MAKE) --no-print-directory goldens-if-stale TASK=$*

# ---- objects ---------------------------------------------------------------------------------
# One short line per build step ("  CXX  build/…/x.o"); V=1 prints the full commands (class grading's logs do).
V ?= 0
ifeq ($(V),1)
say =
else
say = @echo "  $(1)  $@";
endif
$(COMMON)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX )$(CCACHE) $(CXX) $(CXXFLAGS) -c $< -o $@

$(COMMON)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC)$(CCACHE) $(NVCC) $(NVCCFLAGS) -c $< -o $@

# The student kit has no source for the oracles that would answer a task (tools/kit/compiled_only.txt): it links the
# objects the release compiled (prebuilt/<path>.o) wherever the source is absent.
$(COMMON)/%.o: prebuilt/%.o
	@mkdir -p $(dir $@)
	$(call say,COPY)cp $< $@

# Those objects, for the release (tools/kit/make_release.sh): no debug information, and the GPU ones as machine code
# for every GPU a student may have (sm_80 … sm_120), no PTX: a kit file holds no readable kernel.
KIT_OBJ_DIR := build/kit-prebuilt
KIT_ARCH := $(foreach a,80 86 89 90 100 120,-gencode arch=compute_$(a),code=sm_$(a))
$(KIT_OBJ_DIR)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX )$(CCACHE) $(CXX) $(filter-out -g -MMD -MP,$(CXXFLAGS)) -g0 -c $< -o $@
$(KIT_OBJ_DIR)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC)$(CCACHE) $(NVCC) $(filter-out $(CUDA_ARCH) -lineinfo -MMD -MP,$(NVCCFLAGS)) $(KIT_ARCH) -c $< -o $@

# The implementation side: SOLUTION=1 turns on the reference's solution blocks — for the reference
# only: a student's file compiled with it could switch on code it copied or included.
SOLUTION_FLAG = $(if $(filter build/reference/%,$@),-DSOLUTION=1,)
$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX )$(CCACHE) $(CXX) $(CXXFLAGS) $(SOLUTION_FLAG) -c $< -o $@

$(BUILD)/%.o: %.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC)$(CCACHE) $(NVCC) $(NVCCFLAGS) $(SOLUTION_FLAG) -c $< -o $@

$(BUILD)/grader/main.o: grader/main.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX )$(CCACHE) $(CXX) $(CXXFLAGS) -DATTNLAB_IMPL='"$(IMPL)"' -c $< -o $@

$(COMMON)/grader/protected_manifest.cpp: grader/protected.sha256
	@mkdir -p $(dir $@)
	@{ echo 'extern const char kProtectedManifest[];'; printf 'const char kProtectedManifest[] = R"attnlab('; \
	   cat $<; echo ')attnlab";'; } > $@

# ---- test binaries: the same test objects, linked against either side ----------------------
# CPU tasks use Catch2's own main; GPU tasks a main that skips (exit 77) without a CUDA device.
test_main = $(if $(filter $(1),$(GPU_TASKS)),common/cuda/test_main_gpu.cpp,common/test_main.cpp)
define TASK_TEST
$(RUNNER_BIN_DIR)/runner_task$(1): $(call obj_common,$(call runner_src,$(1))) $(call obj_impl,$(call task_impl_src,$(1)))
	@mkdir -p $$(dir $$@)
	$$(call say,LINK)$$(CXX) $$^ -o $$@ $$(call runner_ldlibs,$(1)) $$(TASK$(1)_RUNNER_LIBS)

# The test program is trusted: the cases, the oracles and the proxies; the student's code runs in the runner.
$(BUILD)/bin/task$(1): $(call obj_common,$(call test_main,$(1)) common/case_test.cpp task$(1)/test_task$(1).cpp task$(1)/cases.cpp $(TASK$(1)_EXTRA) $(call task_proxy_src,$(1))) $(call harness_of,$(1)) | $(RUNNER_BIN_DIR)/runner_task$(1) $(call null_runner,$(1))
	@mkdir -p $$(dir $$@)
	$$(call say,LINK)$$(CXX) $$^ -o $$@ $$(call ldlibs_of,$(1))

# On a fresh machine `make taskN` sets itself up first, as `make grade` does: the packages (and,
# for Task 7, its PyPI assets), this task's goldens, the build.
ifneq ($(if $(PROMPT),$(1)),7)
task$(1):$(if $(filter $(1),$(GPU_TASKS)), cuda-toolkit)
	@bash tools/setup/install_deps.sh $(if $(filter 7,$(1)),,--packages-only)
	@$$(MAKE) --no-print-directory goldens-if-stale-task$(1)
	@$$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/bin/task$(1) $(RUNNER_BIN_DIR)/runner_task$(1)
	ATTNLAB_SUITE=$(SUITE) ./$(BUILD)/bin/task$(1)
endif
endef
$(foreach t,$(TASKS),$(eval $(call TASK_TEST,$(t))))

define NULL_RUNNER
$(NULL_RUNNER_DIR)/runner_task$(1): $(call obj_common,$(call runner_src,$(1)) $(call null_submission_src,$(1)))
	@mkdir -p $$(dir $$@)
	$$(call say,LINK)$$(CXX) $$^ -o $$@ $$(call runner_ldlibs,$(1)) $$(TASK$(1)_RUNNER_LIBS)
endef
$(foreach t,$(NULL_TASKS),$(eval $(call NULL_RUNNER,$(t))))

# Task 7: `make task7` runs its tests; `make task7 PROMPT="…" TOKENS=50` runs GPT-2 on your kernels.
ifdef PROMPT
task7: $(BUILD)/bin/gpt2
	./$(BUILD)/bin/gpt2 --prompt "$(PROMPT)" --tokens $(or $(TOKENS),50) $(ARGS)
endif
$(BUILD)/bin/gpt2: $(call obj_common,task7/gpt2_main.cpp $(TASK7_EXTRA)) $(HARNESS_OBJ) $(call obj_impl,$(call task_impl_src,7))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

# Task 7's host-side parts, without a GPU (CI runs them): the tokenizer against tiktoken, the checkpoint reader's checks.
$(BUILD)/bin/task7_cpu_tests: $(call obj_common,common/test_main.cpp task7/test_tokenizer.cpp task7/test_checkpoint.cpp $(TASK7_EXTRA)) \
                              $(HARNESS_OBJ) $(call obj_impl,$(call task_impl_src,7))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

# Task 7's default model: a small GPT-2 trained on the King James Bible (about 10 minutes on 2 cores).
MODEL_DIR ?= models/kjv-gpt2
model: $(MODEL_DIR)/reference.safetensors
$(MODEL_DIR)/reference.safetensors: tools/goldens/train_model.py
	@bash tools/setup/install_deps.sh
	PYTHONPATH=$(CURDIR)/.deps/py $(PYTHON) tools/goldens/train_model.py --out $(MODEL_DIR) $(MODEL_ARGS)

$(BUILD)/bin/unit_tests: $(call obj_common,common/test_main.cpp common/test_harness.cpp common/test_diagnose_backward.cpp \
                        common/cuda/backward_oracle_cpu.cpp grader/test_node_window.cpp grader/node_window.cpp) $(HARNESS_OBJ)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

unit: $(BUILD)/bin/unit_tests
	./$(BUILD)/bin/unit_tests

# ---- the Python bridge (python/attnlab) ---------------------------------------------------------
# build/<impl>/python/libattnlab.so: python/bridge.cpp's C interface over the student's Tasks 2, 4 and 5,
# linked from the same objects as the tests (every object is compiled -fPIC); bridge.cpp's own under build/<impl>/python/.
# CUDA's runtime is linked statically: the library needs only the driver, whatever CUDA torch carries.
# Task 4's backward bonus (task4_backward/task4_backward.h) is part of Task 4's implementation; named apart so that the bridge
# links it whatever TASK4_SRC says (listed once if TASK4_SRC has it too).
PY_BUILD    := $(BUILD)/python
TASK4_BACKWARD_SRC ?= task4_backward/$(IMPL)/flash_attention_backward.cu
BRIDGE_OBJ   = $(PY_BUILD)/python/bridge.o $(call obj_impl,$(TASK2_SRC) $(sort $(TASK4_SRC) $(TASK4_BACKWARD_SRC)) $(TASK5_SRC)) \
               $(call obj_common,task4/tuning.cpp common/fmt_impl.cpp common/cuda/cuda_check.cpp common/golden.cpp common/safetensors.cpp \
                                 common/tensor.cpp common/compare.cpp)
# The package (python/pyproject.toml): `pip install -e python/` finds this library in build/$(IMPL)/python/ of the
# checkout; the wheel in build/<impl>/python/dist/ carries it (and task4/tuning.json) inside, for anywhere else.
PY_WHEEL := $(PY_BUILD)/dist/.built
python: $(PY_BUILD)/libattnlab.so $(PY_WHEEL)
$(PY_BUILD)/libattnlab.so: $(BRIDGE_OBJ)
	$(call say,LINK)$(CXX) -shared -Wl,--no-undefined $^ -o $@ -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lpthread
$(PY_WHEEL): $(PY_BUILD)/libattnlab.so python/pyproject.toml python/setup.py $(wildcard python/attnlab/*.py) task4/tuning.json
	@rm -rf $(PY_BUILD)/package $(dir $@) && mkdir -p $(PY_BUILD)/package/attnlab $(dir $@)
	@cp python/pyproject.toml python/setup.py $(PY_BUILD)/package/ && cp python/attnlab/*.py task4/tuning.json $(PY_BUILD)/package/attnlab/
	@strip --strip-debug -o $(PY_BUILD)/package/attnlab/libattnlab.so $<
	$(PYTHON) -m pip wheel --quiet --disable-pip-version-check --no-deps --no-build-isolation --no-index -w $(dir $@) $(PY_BUILD)/package
	@touch $@
	@echo "python: $< and $$(ls $(dir $@)*.whl); pip install -e python/ (this checkout) or pip install that wheel"
# On a GPU machine, with a CUDA build of torch ($(TORCH_PYTHON)): the bridge timed against torch, into the
# Results.md of `make grade` (OUT); Hugging Face models generating on the bridge's attention.
TORCH_PYTHON ?= python3
torch-speedups: python
	ATTNLAB_IMPL=$(IMPL) $(TORCH_PYTHON) tools/vs_torch/torch_speedups.py --results $(OUT)/Results.md
hf-attnlab: python
	ATTNLAB_IMPL=$(IMPL) $(TORCH_PYTHON) tools/vs_torch/hf_attnlab.py
# Task 7's model trained on attnlab.attention (4c's forward and backward in float32; 4d's with --precision bf16) and on SDPA, one seed and
# data order, with a second SDPA backend as the noise (math in float32, cuDNN in bf16): curves, tokens/s, verdict → $(TRAIN_OUT).
TRAIN_OUT ?= build/train-attnlab
train-attnlab: python
	PYTHONPATH=$(CURDIR)/.deps/py ATTNLAB_IMPL=$(IMPL) $(TORCH_PYTHON) tools/vs_torch/train_attnlab.py --out $(TRAIN_OUT) $(TRAIN_ARGS)
$(PY_BUILD)/python/bridge.o: python/bridge.cpp
	@mkdir -p $(dir $@)
	$(call say,CXX )$(CCACHE) $(CXX) $(CXXFLAGS) -DATTNLAB_IMPL='"$(IMPL)"' -c $< -o $@

# ---- Task 4's bf16 bonus (task4_bf16/task4_bf16.h): scored apart from the seven tasks (grader/rubric.json, "bonus") --
# Its implementation is part of Task 4's (task4_bf16/$(IMPL)/flash_attention_bf16.cu), so runner_task4 serves it.
TASK4C_ORACLE := common/cuda/backward_oracle_cpu.cpp common/cuda/backward_oracle_gpu.cu
# The trusted side's GPU oracles of timed calls (4d's cuBLAS backward from o and lse, 6b's server step) against plainer
# ones: a GPU test, skipped without a device.
$(BUILD)/bin/grader_gpu_tests: $(call obj_common,common/cuda/test_main_gpu.cpp grader/test_timed_oracles.cpp \
                               common/cuda/bf16_backward_oracle.cu common/cuda/paged_oracle.cu $(TASK4C_ORACLE)) $(HARNESS_OBJ)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)
grader-gpu-tests: $(BUILD)/bin/grader_gpu_tests
	./$(BUILD)/bin/grader_gpu_tests
TASK4_BONUS_CASES := task4_bf16/cases_bf16.cpp task4_backward/cases_backward.cpp task4_bf16_backward/cases_bf16_backward.cpp $(TASK4C_ORACLE)
TASK5_BONUS_CASES := task5_paged/cases_paged.cpp
TASK6_BONUS_CASES := task6_serve/cases_serve.cpp
TASK4B_CASES := task4_bf16/cases_bf16.cpp task4_bf16/remote.cpp
$(BUILD)/bin/task4_bf16: $(call obj_common,$(call test_main,4) common/case_test.cpp task4_bf16/test_task4_bf16.cpp $(TASK4B_CASES)) \
                         $(HARNESS_OBJ) | $(RUNNER_BIN_DIR)/runner_task4 $(call null_runner,4)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

task4-bf16:
	@bash tools/setup/install_deps.sh --packages-only
	@$(MAKE) --no-print-directory goldens-if-stale-task4
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/bin/task4_bf16 $(RUNNER_BIN_DIR)/runner_task4
	ATTNLAB_SUITE=$(SUITE) ./$(BUILD)/bin/task4_bf16

$(BUILD)/bin/bench_task4_bf16: $(call obj_common,task4_bf16/bench_task4_bf16.cpp $(TASK4_EXTRA)) $(HARNESS_OBJ) \
                               $(call obj_impl,$(TASK4_SRC))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

bench-task4-bf16: $(BUILD)/bin/bench_task4_bf16
	./$(BUILD)/bin/bench_task4_bf16 $(ARGS)

# The bf16 ladder (course staff): every rung of task4_bf16/ladder beside the reference.
# Its Hopper rungs (6-10) are built like the reference's sm_90 file (HOPPER_ARCH, ATTNLAB_SM90A=1: see CUDA_ARCH).
BF16_HOPPER_RUNGS := $(call obj_common,$(addprefix task4_bf16/ladder/,wgmma_bf16.cu tma_bf16.cu warp_specialized_bf16.cu pingpong_bf16.cu persistent_bf16.cu wgmma_selftest.cu))
$(BF16_HOPPER_RUNGS): override CUDA_ARCH := $(HOPPER_ARCH)
$(BF16_HOPPER_RUNGS): NVCCFLAGS += -DATTNLAB_SM90A=1
BF16_LADDER_OBJ := $(call obj_common,task4_bf16/ladder/wmma_bf16.cu task4_bf16/ladder/mma_bf16.cu) $(BF16_HOPPER_RUNGS) $(HARNESS_OBJ) \
                   build/reference/task4_bf16/reference/flash_attention_bf16.o build/reference/task4_bf16/reference/flash_attention_bf16_sm90.o
build/reference/bin/ladder_task4_bf16: $(call obj_common,task4_bf16/ladder/bench_ladder_bf16.cpp) $(BF16_LADDER_OBJ)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

ladder-task4-bf16: build/reference/bin/ladder_task4_bf16
	./$< $(ARGS)

# Every rung of the bf16 ladder at ragged shapes (task4_bf16/ladder/check_ladder_bf16.cpp); ARGS: rung names.
build/reference/bin/check_ladder_task4_bf16: $(call obj_common,task4_bf16/ladder/check_ladder_bf16.cpp) $(BF16_LADDER_OBJ)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

check-ladder-task4-bf16: build/reference/bin/check_ladder_task4_bf16
	./$< $(ARGS)

# ---- Task 4's backward bonus (task4_backward/task4_backward.h): scored apart from the seven tasks (grader/rubric.json, "bonus") --
# Its implementation is part of Task 4's (task4_backward/$(IMPL)/flash_attention_backward.cu), so runner_task4 serves it.
TASK4C_CASES := task4_backward/cases_backward.cpp $(TASK4C_ORACLE) task4_backward/remote.cpp
$(BUILD)/bin/task4_backward: $(call obj_common,$(call test_main,4) common/case_test.cpp task4_backward/test_task4_backward.cpp $(TASK4C_CASES)) \
                             $(HARNESS_OBJ) | $(RUNNER_BIN_DIR)/runner_task4 $(call null_runner,4)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

task4-backward:
	@bash tools/setup/install_deps.sh --packages-only
	@$(MAKE) --no-print-directory goldens-if-stale-task4
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/bin/task4_backward $(RUNNER_BIN_DIR)/runner_task4
	ATTNLAB_SUITE=$(SUITE) ./$(BUILD)/bin/task4_backward

$(BUILD)/bin/bench_task4_backward: $(call obj_common,task4_backward/bench_task4_backward.cpp $(TASK4C_ORACLE) $(TASK4_EXTRA)) $(HARNESS_OBJ) \
                                   $(call obj_impl,$(TASK4_SRC))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

bench-task4-backward: $(BUILD)/bin/bench_task4_backward
	./$(BUILD)/bin/bench_task4_backward $(ARGS)

# The backward's ladder (course staff): every rung of task4_backward/ladder beside the reference.
build/reference/bin/ladder_task4_backward: $(call obj_common,task4_backward/ladder/bench_ladder_backward.cpp \
                                           task4_backward/ladder/naive_backward.cu task4_backward/ladder/tf32_backward.cu \
                                           $(TASK4C_ORACLE)) $(HARNESS_OBJ) build/reference/task4_backward/reference/flash_attention_backward.o
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

ladder-task4-backward: build/reference/bin/ladder_task4_backward
	./$< $(ARGS)

# Its top rung, 3xTF32 on the tensor cores, against the reference: ragged checks, accuracy against float64, timings.
build/reference/bin/ladder_task4_backward_tf32: $(call obj_common,task4_backward/ladder/bench_backward_tf32.cpp \
                                                task4_backward/ladder/tf32_backward.cu $(TASK4C_ORACLE)) $(HARNESS_OBJ) \
                                                build/reference/task4_backward/reference/flash_attention_backward.o
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

ladder-task4-backward-tf32: build/reference/bin/ladder_task4_backward_tf32
	./$< $(ARGS)

# ---- Task 4's bf16 backward bonus (task4_bf16_backward/task4_bf16_backward.h): scored apart (grader/rubric.json, "bonus") --
# Its implementation is part of Task 4's (task4_bf16_backward/$(IMPL)/flash_attention_bf16_backward.cu), so runner_task4 serves it.
TASK4D_CASES := task4_bf16_backward/cases_bf16_backward.cpp $(TASK4C_ORACLE) task4_bf16_backward/remote.cpp
$(BUILD)/bin/task4_bf16_backward: $(call obj_common,$(call test_main,4) common/case_test.cpp task4_bf16_backward/test_task4_bf16_backward.cpp \
                                  $(TASK4D_CASES)) $(HARNESS_OBJ) | $(RUNNER_BIN_DIR)/runner_task4 $(call null_runner,4)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

task4-bf16-backward:
	@bash tools/setup/install_deps.sh --packages-only
	@$(MAKE) --no-print-directory goldens-if-stale-task4
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/bin/task4_bf16_backward $(RUNNER_BIN_DIR)/runner_task4
	ATTNLAB_SUITE=$(SUITE) ./$(BUILD)/bin/task4_bf16_backward

$(BUILD)/bin/bench_task4_bf16_backward: $(call obj_common,task4_bf16_backward/bench_task4_bf16_backward.cpp \
                                        $(TASK4C_ORACLE) $(TASK4_EXTRA)) $(HARNESS_OBJ) $(call obj_impl,$(TASK4_SRC))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

bench-task4-bf16-backward: $(BUILD)/bin/bench_task4_bf16_backward
	./$(BUILD)/bin/bench_task4_bf16_backward $(ARGS)

# ---- benchmarks (GPU) --------------------------------------------------------------------------
# Task 4's baseline is Task 2's reference pipeline, whatever IMPL is.
$(BUILD)/bin/bench_task2: $(call obj_common,task2/bench_task2.cpp) $(HARNESS_OBJ) $(call obj_impl,$(TASK2_SRC))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

$(BUILD)/bin/bench_task4: $(call obj_common,task4/bench_task4.cpp $(TASK4_EXTRA)) $(HARNESS_OBJ) \
                          $(call obj_impl,$(TASK4_SRC)) $(call ref_or_own,task2/reference/attention_kernels.o,$(TASK2_SRC))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

build/reference/bin/tune_task4: $(call obj_common,task4/tune_task4.cpp $(TASK4_EXTRA)) $(HARNESS_OBJ) \
                                build/reference/task4/reference/flash_attention.o
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

ifneq ($(BUILD),build/reference)
build/reference/%.o: %.cu
	@mkdir -p $(dir $@)
	$(call say,NVCC)$(CCACHE) $(NVCC) $(NVCCFLAGS) -DSOLUTION=1 -c $< -o $@

# Without this make's command-line variables (make exports them, and passes them on in MAKEFLAGS): a BUILD=,
# RUNNER_BIN_DIR=, TASKn_SRC= or CUDA_ARCH= given for another build would reach the reference's, and BUILD= would
# send the sub-make back to this rule without end.
build/reference/bin/%: FORCE
	@unset BUILD RUNNER_BIN_DIR GRADER_BIN CUDA_ARCH $(foreach t,$(TASKS),TASK$(t)_SRC); \
	  MAKEFLAGS= $(MAKE) --no-print-directory IMPL=reference $@
endif
FORCE:

$(BUILD)/bin/bench_task5: $(call obj_common,task5/bench_task5.cpp $(TASK4_EXTRA)) $(HARNESS_OBJ) \
                          $(call obj_impl,$(TASK5_SRC)) $(call ref_or_own,task4/reference/flash_attention.o,$(TASK4_SRC))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

bench-task5: $(BUILD)/bin/bench_task5
	./$(BUILD)/bin/bench_task5 $(ARGS)

# ---- Task 5's paged part (task5_paged/task5_paged.h): a room of its own, served by runner_task5 -----------------
# Its implementation is part of Task 5's (task5_paged/$(IMPL)/paged_decode.cu), so runner_task5 serves it.
TASK5B_CASES := task5_paged/cases_paged.cpp task5_paged/remote.cpp
$(BUILD)/bin/task5_paged: $(call obj_common,$(call test_main,5) common/case_test.cpp task5_paged/test_task5_paged.cpp \
                          $(TASK5B_CASES)) $(HARNESS_OBJ) | $(RUNNER_BIN_DIR)/runner_task5 $(call null_runner,5)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

task5-paged: cuda-toolkit
	@bash tools/setup/install_deps.sh --packages-only
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/bin/task5_paged $(RUNNER_BIN_DIR)/runner_task5
	ATTNLAB_SUITE=$(SUITE) ./$(BUILD)/bin/task5_paged

$(BUILD)/bin/bench_task5_paged: $(call obj_common,task5_paged/bench_task5_paged.cpp) $(HARNESS_OBJ) \
                                $(call obj_impl,$(filter task5_paged/%,$(TASK5_SRC)))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

bench-task5-paged: $(BUILD)/bin/bench_task5_paged
	./$(BUILD)/bin/bench_task5_paged $(ARGS)

# ---- Task 6's serving part (task6_serve/task6_serve.h): a room of its own, served by runner_task6 ------------------
# Its implementation is part of Task 6's (task6_serve/$(IMPL)/paged_serving.cpp), on the student's 4b and 5b kernels.
# The trusted side needs the model's weights (task6/model.cpp), whose DecoderModel calls the student's functions:
# their proxies (remote.cpp) stand in, never called.
TASK6B_CASES := task6_serve/cases_serve.cpp task6_serve/serving_model.cpp task6/model.cpp $(call task_proxy_src,6)
$(BUILD)/bin/task6_serve: $(call obj_common,$(call test_main,6) common/case_test.cpp task6_serve/test_task6_serve.cpp \
                          $(TASK6B_CASES)) $(HARNESS_OBJ) | $(RUNNER_BIN_DIR)/runner_task6 $(call null_runner,6)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

task6-serve: cuda-toolkit
	@bash tools/setup/install_deps.sh --packages-only
	@$(MAKE) --no-print-directory -j$(JOBS) $(BUILD)/bin/task6_serve $(RUNNER_BIN_DIR)/runner_task6
	ATTNLAB_SUITE=$(SUITE) ./$(BUILD)/bin/task6_serve

# A trace served paged and reserved at max_seq on the student's kernels: tokens/s, TBT, TTFT, pages, the largest batch.
$(BUILD)/bin/bench_task6_serve: $(call obj_common,task6_serve/bench_task6_serve.cpp task4/tuning.cpp task6/model.cpp task6/timing.cpp $(TASK6B_ENGINE)) $(HARNESS_OBJ) \
                                $(call obj_impl,$(call task_impl_src,6))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

bench-task6-serve: $(BUILD)/bin/bench_task6_serve
	./$(BUILD)/bin/bench_task6_serve $(ARGS)

# Task 6's model on the student's Tasks 4–6: TTFT, TBT, the no-cache baseline, where a step's time goes.
$(BUILD)/bin/bench_task6: $(call obj_common,task6/bench_task6.cpp $(TASK6_EXTRA)) $(HARNESS_OBJ) $(call obj_impl,$(call task_impl_src,6))
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

bench-task6: $(BUILD)/bin/bench_task6
	./$(BUILD)/bin/bench_task6 $(ARGS)

bench-task2: $(BUILD)/bin/bench_task2
	./$(BUILD)/bin/bench_task2 $(ARGS)

bench-task4: $(BUILD)/bin/bench_task4
	./$(BUILD)/bin/bench_task4 $(ARGS)

# ---- profiling and sanitizers (GPU) ----------------------------------------------------------------
# drive_taskN (taskN/drive_taskN.cpp, common/cuda/drive.h) calls the task's functions directly, as the
# benchmarks do: no runner, nothing judged, no part in grading. `make profile-taskN` runs Nsight Compute on
# its profiled call (build/<impl>/profile/taskN.ncu-rep and a summary, the reference's beside it where the
# course repository has one); `make sanitize-taskN` runs compute-sanitizer on its small shapes
# (tools/profile/profile.sh). Without a GPU, ncu or compute-sanitizer: one line saying which, exit 77.
DRIVE4_EXTRA := $(TASK4_EXTRA)
DRIVE5_EXTRA := $(TASK4_EXTRA)
define DRIVE
$(BUILD)/bin/drive_task$(1): $(call obj_common,task$(1)/drive_task$(1).cpp $(DRIVE$(1)_EXTRA)) $(HARNESS_OBJ) $(call obj_impl,$(TASK$(1)_SRC))
	@mkdir -p $$(dir $$@)
	$$(call say,LINK)$$(CXX) $$^ -o $$@ $$(LDLIBS)
endef
$(foreach t,$(DRIVE_TASKS),$(eval $(call DRIVE,$(t))))

$(foreach t,$(DRIVE_TASKS),profile-task$(t)): profile-task%: $(BUILD)/bin/drive_task% $(if $(HAVE_REFERENCE),build/reference/bin/drive_task%)
	@bash tools/profile/profile.sh profile $* $(BUILD) $(if $(HAVE_REFERENCE),build/reference)

$(foreach t,$(DRIVE_TASKS),sanitize-task$(t)): sanitize-task%: $(BUILD)/bin/drive_task%
	@bash tools/profile/profile.sh sanitize $* $(BUILD)

# ---- debugging the CPU tasks in one process ----------------------------------------------------------
# drive_taskN (taskN/drive_taskN.cpp, common/debug_drive.h) calls Task 1's or Task 3's functions in one process on small
# ragged shapes, each call announced: no runner, nothing judged. `make asan-taskN` builds it and your code with
# AddressSanitizer and UBSan and runs it (a read or write past a buffer stops at its line, with the stack); `make
# gdb-taskN` builds it without optimisation and runs it in gdb (a crash stops at its line; `bt`). ARGS=NAME: only the
# calls whose announcement contains NAME.
DEBUG_CXXFLAGS := -std=c++17 -O0 -g -fno-omit-frame-pointer -I.
$(BUILD)/debug/asan_task%: DEBUG_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=undefined
define DEBUG_DRIVE
$(BUILD)/debug/asan_task$(1) $(BUILD)/debug/gdb_task$(1): task$(1)/drive_task$(1).cpp $(TASK$(1)_SRC) common/debug_drive.h common/todo.h \
                                                          task$(1)/task$(1).h
	@mkdir -p $$(dir $$@)
	$$(call say,CXX )$$(CXX) $$(DEBUG_CXXFLAGS) $$(SOLUTION_FLAG) $$(DEBUG_SANITIZE) $$(filter %.cpp,$$^) -o $$@
asan-task$(1): $(BUILD)/debug/asan_task$(1)
	./$$< $$(ARGS)
gdb-task$(1): $(BUILD)/debug/gdb_task$(1)
	@command -v gdb >/dev/null || { echo "gdb-task$(1): gdb is not installed (Debian: apt-get install gdb)"; exit 1; }
	gdb -q -ex run -ex bt --args ./$$< $$(ARGS)
endef
$(foreach t,$(CPU_TASKS),$(eval $(call DEBUG_DRIVE,$(t))))
.PHONY: $(foreach t,$(CPU_TASKS),asan-task$(t) gdb-task$(t))

# The reference's (Br, Bc, threads) sweep: course staff only (the kit has no reference).
ifneq ($(HAVE_REFERENCE),)
tune-task4: build/reference/bin/tune_task4
	./build/reference/bin/tune_task4
else
tune-task4:
	$(error tune-task4 sweeps the model solution's tile sizes and needs the course repository: the student kit has no task4/reference/)
endif

# ---- the optimisation ladders (course staff material; not in the student kit) -------------------
# ladder_taskN times every step from the skeleton's plan to the reference (task2/ladder, task4/ladder,
# task5/ladder). The ladder steps are also built as submissions (calibration cases of grader/controls.json:
# tools/controls/check_controls.py on a GPU, tools/gpu/pack_gpu.sh for one elsewhere), which the grader times to check
# that each lands in its band of the speed-credit curve.
build/reference/bin/ladder_task2: $(call obj_common,task2/ladder/bench_ladder.cpp task2/ladder/softmax_ladder.cu \
                                  task2/ladder/gemm_ladder.cu) $(HARNESS_OBJ) build/reference/task2/reference/attention_kernels.o
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)
build/reference/bin/ladder_task4: $(call obj_common,task4/ladder/bench_ladder.cpp task4/ladder/ladder.cu $(TASK4_EXTRA)) \
                                  $(HARNESS_OBJ) build/reference/task4/reference/flash_attention.o \
                                  build/reference/task2/reference/attention_kernels.o
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)
build/reference/bin/ladder_task5: $(call obj_common,task5/ladder/bench_ladder.cpp task5/ladder/ladder.cu) $(HARNESS_OBJ) \
                                  build/reference/task5/reference/decode.o
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)
ladder-task2 ladder-task4 ladder-task5: ladder-task%: build/reference/bin/ladder_task%
	./$< $(ARGS)

# The reference's times per GPU model for the kit's speed estimates (grader/reference_times.json), on a GPU.
reference-times:
	@$(MAKE) --no-print-directory setup SETUP_TASKS="4 5"
	@$(MAKE) --no-print-directory -j2 IMPL=reference build/reference/bin/grader build/reference/bin/runner_task4 build/reference/bin/runner_task5
	$(PYTHON) tools/gpu/reference_times.py

# ---- grader ----------------------------------------------------------------------------------
# Controls reuse the reference objects and swap in one patched file: GRADER_BIN keeps them apart.
GRADER_BIN ?= $(BUILD)/bin/grader
RUNNERS = $(foreach t,$(TASKS),$(RUNNER_BIN_DIR)/runner_task$(t))
# The grader links no student object: it runs each task's runner (beside it, or --bin-dir).
$(GRADER_BIN): $(BUILD)/grader/main.o $(COMMON)/grader/protected_manifest.o \
               $(sort $(call obj_common,$(GRADER_SRC) $(foreach t,$(TASKS),task$(t)/cases.cpp $(TASK$(t)_BONUS_CASES) $(TASK$(t)_EXTRA) \
                                                 $(call task_proxy_src,$(t))))) \
               $(HARNESS_OBJ) | $(RUNNERS) $(NULL_RUNNERS)
	@mkdir -p $(dir $@)
	$(call say,LINK)$(CXX) $^ -o $@ $(LDLIBS)

# The reference's benchmarks are the yardstick of performance credit, whatever IMPL is graded.
GRADE_OBJECTS = $(foreach t,$(TASKS),--objects $(t)=$(subst $(eval) ,$(comma),$(strip $(call obj_impl,$(TASK$(t)_SRC)))))
comma := ,
# On a fresh machine `make grade` sets everything up first: packages, goldens, the build. After the grader,
# tools/pictures/plot_results.py draws the run's rooflines and speedups into OUT and links them from Results.md.
# The GPU tasks and the grader (it grades them too) are compiled with nvcc: without it, one message says so before
# anything is built. Tasks 1 and 3 need no CUDA.
cuda-toolkit:
	@command -v $(NVCC) >/dev/null 2>&1 || { \
	  echo "make $(or $(filter task% grade,$(MAKECMDGOALS)),$@): $(if $(filter task%,$(MAKECMDGOALS)),this task runs on the GPU,the grader grades the GPU tasks too) and needs the CUDA toolkit (nvcc, CUDA 13 or newer), which is not on this machine: nvcc is neither on PATH nor in CUDA_HOME=$(CUDA_HOME)/bin."; \
	  echo "  Install it (https://developer.nvidia.com/cuda-downloads; root or sudo) or point CUDA_HOME at it. Tasks 1 and 3 need no CUDA: make task1, make task3."; \
	  exit 1; }

# With TASK, the report of those tasks goes to build/grade-taskN/ (a TASK of several: N-M-…), so that Results.md, the
# report of every task, is never replaced by one task's.
GRADE_OUT = $(if $(strip $(TASK)),$(OUT)/build/grade-task$(shell echo $(strip $(TASK)) | tr ' ' -),$(OUT))
grade: cuda-toolkit
	@bash tools/setup/install_deps.sh
	@$(MAKE) --no-print-directory goldens-if-stale
	@$(MAKE) --no-print-directory -j$(JOBS) grade-build
	@mkdir -p $(GRADE_OUT)
	@./$(GRADER_BIN) --out $(GRADE_OUT) --bin-dir $(BUILD)/bin $(GRADE_OBJECTS) $(foreach t,$(TASK),--task $(t)); rc=$$?; \
	  $(PYTHON) tools/pictures/plot_results.py $(GRADE_OUT) || echo "grade: tools/pictures/plot_results.py failed (the grade above stands)"; \
	  $(if $(strip $(TASK)),echo "grade: the report of task $(strip $(TASK)) is $(GRADE_OUT)/Results.md (the report of every task in $(OUT)/Results.md is left as it was)";) exit $$rc

runners: $(RUNNERS) $(NULL_RUNNERS)

grade-build: $(GRADER_BIN) $(RUNNERS) \
             $(if $(HAVE_REFERENCE),$(foreach t,4 5,build/reference/bin/runner_task$(t)))

all: $(foreach t,$(TASKS),$(BUILD)/bin/task$(t)) $(BUILD)/bin/unit_tests $(BUILD)/bin/grader_gpu_tests $(GRADER_BIN) $(BUILD)/bin/bench_task2 \
     $(BUILD)/bin/gpt2 $(BUILD)/bin/task7_cpu_tests \
     $(BUILD)/bin/bench_task4 $(BUILD)/bin/bench_task5 $(BUILD)/bin/bench_task6 $(if $(HAVE_REFERENCE),build/reference/bin/tune_task4) \
     $(foreach t,$(DRIVE_TASKS),$(BUILD)/bin/drive_task$(t)) $(BUILD)/bin/task4_bf16 $(BUILD)/bin/bench_task4_bf16 \
     $(BUILD)/bin/task4_backward $(BUILD)/bin/bench_task4_backward $(BUILD)/bin/task4_bf16_backward $(BUILD)/bin/bench_task4_bf16_backward \
     $(BUILD)/bin/task5_paged $(BUILD)/bin/bench_task5_paged $(BUILD)/bin/task6_serve $(BUILD)/bin/bench_task6_serve

# ---- skeletons are generated from the reference (unifdef drops the SOLUTION blocks) -----------
REFERENCE_SRC := $(wildcard task*/reference/*.cpp task*/reference/*.cu)
skeleton:
	@for f in $(REFERENCE_SRC); do s=$$(echo $$f | sed 's|/reference/|/skeleton/|'); \
	  unifdef -USOLUTION -o $$s $$f; test $$? -le 1 || exit 1; echo "wrote $$s"; done

check-skeleton:
	@mkdir -p $(COMMON); status=0; for f in $(REFERENCE_SRC); do s=$$(echo $$f | sed 's|/reference/|/skeleton/|'); \
	  unifdef -USOLUTION $$f > $(COMMON)/skeleton.tmp; test $$? -le 1 || exit 1; \
	  if ! cmp -s $(COMMON)/skeleton.tmp $$s; then echo "DRIFT: $$s differs from unifdef of $$f (run 'make skeleton')"; status=1; fi; \
	done; rm -f $(COMMON)/skeleton.tmp; \
	if [ $$status = 0 ]; then echo "check-skeleton: every skeleton equals its generated form"; fi; exit $$status

# ---- protected files ----------------------------------------------------------------------------
protect:
	@sha256sum $(PROTECTED) > grader/protected.sha256 && echo "wrote grader/protected.sha256 ($(words $(PROTECTED)) files)"

check-protected:
	@sha256sum $(PROTECTED) | cmp -s - grader/protected.sha256 && echo "check-protected: grader/protected.sha256 is current" \
	  || { echo "grader/protected.sha256 is stale: run 'make protect' after changing the harness"; exit 1; }

# ---- the student kit ------------------------------------------------------------------------------
release check-release:
	@test -d tools/kit || { echo "make $@ builds the student kit from the course repository (tools/kit/); this is the kit"; exit 1; }
	@bash tools/kit/$(if $(filter release,$@),make_release.sh,check_release.sh)

# ---- CI ----------------------------------------------------------------------------------------
test:
	@bash tools/ci/run_tests.sh

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
