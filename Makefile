# attnlab — build, test and grade. `make help` lists the targets.
#
#   make taskN [IMPL=skeleton|reference]   build and run Task N's tests (default: your skeleton)
#   make grade [IMPL=…]                    grade every task → Results.md, results.json
#   make test                              what CI runs: deps, goldens, both sides, controls
#   make goldens | deps | skeleton | check-skeleton | clean
IMPL     ?= skeleton
BUILD    ?= build/$(IMPL)
COMMON   := build/common
PYTHON   ?= /usr/bin/python3
OUT      ?= .
CXX      ?= g++
CXXFLAGS ?= -O2 -g
CXXFLAGS += -std=c++17 -Wall -Wextra -I. -DFMT_HEADER_ONLY -DATTNLAB_ROOT='"$(CURDIR)"' -MMD -MP
LDLIBS   += -lpthread

# Each task's implementation: taskN/$(IMPL)/*.cpp unless TASKn_SRC says otherwise (controls do).
CPU_TASKS := 1 3
TASK1_SRC ?= $(wildcard task1/$(IMPL)/*.cpp)
TASK3_SRC ?= $(wildcard task3/$(IMPL)/*.cpp)

HARNESS_SRC := common/tensor.cpp common/safetensors.cpp common/compare.cpp common/check.cpp common/cases.cpp \
               common/golden.cpp common/cpu_ops.cpp common/alloc_tracker.cpp
GRADER_SRC  := grader/main.cpp grader/isolate.cpp grader/report.cpp grader/rubric.cpp grader/tasks.cpp
CASES_SRC    = $(foreach t,$(CPU_TASKS),task$(t)/cases.cpp)

obj_common = $(patsubst %.cpp,$(COMMON)/%.o,$(1))
obj_impl   = $(patsubst %.cpp,$(BUILD)/%.o,$(1))
HARNESS_OBJ := $(call obj_common,$(HARNESS_SRC))

.PHONY: help all deps goldens goldens-if-stale test grade skeleton check-skeleton clean $(foreach t,$(CPU_TASKS),task$(t)) unit
.DEFAULT_GOAL := help

help:
	@sed -n '3,8p' Makefile

# ---- dependencies and goldens --------------------------------------------------------------
deps:
	@bash tools/install_deps.sh

goldens:
	$(PYTHON) tools/make_goldens.py
	@sha256sum tools/make_goldens.py > goldens/.stamp

# Regenerates only when the generator changed since the goldens were written.
goldens-if-stale:
	@sha256sum -c --status goldens/.stamp 2>/dev/null && echo "goldens: up to date" || $(MAKE) --no-print-directory goldens

# ---- objects ---------------------------------------------------------------------------------
$(COMMON)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

# The implementation side: SOLUTION=1 turns on the reference's solution blocks (skeletons have none).
$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -DSOLUTION=1 -c $< -o $@

$(BUILD)/grader/main.o: grader/main.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -DATTNLAB_IMPL='"$(IMPL)"' -c $< -o $@

# ---- test binaries: the same test objects, linked against either side ----------------------
define TASK_TEST
$(BUILD)/bin/task$(1): $(COMMON)/common/test_main.o $(COMMON)/common/case_test.o $(call obj_common,task$(1)/test_task$(1).cpp task$(1)/cases.cpp) $(HARNESS_OBJ) $(call obj_impl,$(TASK$(1)_SRC))
	@mkdir -p $$(dir $$@)
	$$(CXX) $$^ -o $$@ $$(LDLIBS)

task$(1): $(BUILD)/bin/task$(1)
	./$(BUILD)/bin/task$(1) $(if $(SUITE),"[$(SUITE)]")
endef
$(foreach t,$(CPU_TASKS),$(eval $(call TASK_TEST,$(t))))

$(BUILD)/bin/unit_tests: $(COMMON)/common/test_main.o $(call obj_common,common/test_harness.cpp) $(HARNESS_OBJ)
	@mkdir -p $(dir $@)
	$(CXX) $^ -o $@ $(LDLIBS)

unit: $(BUILD)/bin/unit_tests
	./$(BUILD)/bin/unit_tests

all: $(foreach t,$(CPU_TASKS),$(BUILD)/bin/task$(t)) $(BUILD)/bin/unit_tests $(BUILD)/bin/grader

# ---- grader ----------------------------------------------------------------------------------
GRADER_OBJ = $(BUILD)/grader/main.o $(call obj_common,$(filter-out grader/main.cpp,$(GRADER_SRC)) $(CASES_SRC)) \
             $(HARNESS_OBJ) $(call obj_impl,$(foreach t,$(CPU_TASKS),$(TASK$(t)_SRC)))
$(BUILD)/bin/grader: $(GRADER_OBJ)
	@mkdir -p $(dir $@)
	$(CXX) $^ -o $@ $(LDLIBS)

grade: $(BUILD)/bin/grader
	./$(BUILD)/bin/grader --out $(OUT) $(foreach t,$(TASK),--task $(t))

# ---- skeletons are generated from the reference (unifdef drops the SOLUTION blocks) -----------
REFERENCE_SRC := $(wildcard task*/reference/*.cpp task*/reference/*.cu)
skeleton:
	@for f in $(REFERENCE_SRC); do s=$$(echo $$f | sed 's|/reference/|/skeleton/|'); \
	  unifdef -USOLUTION -o $$s $$f; test $$? -le 1 || exit 1; echo "wrote $$s"; done

check-skeleton:
	@status=0; for f in $(REFERENCE_SRC); do s=$$(echo $$f | sed 's|/reference/|/skeleton/|'); \
	  unifdef -USOLUTION $$f > $(COMMON)/skeleton.tmp; test $$? -le 1 || exit 1; \
	  if ! cmp -s $(COMMON)/skeleton.tmp $$s; then echo "DRIFT: $$s differs from unifdef of $$f (run 'make skeleton')"; status=1; fi; \
	done; rm -f $(COMMON)/skeleton.tmp; \
	if [ $$status = 0 ]; then echo "check-skeleton: every skeleton equals its generated form"; fi; exit $$status

# ---- CI ----------------------------------------------------------------------------------------
test:
	@bash tools/run_tests.sh

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
