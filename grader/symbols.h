// symbols.h — the static audit of a submission: what its object files may reference, what they may
// define, and what they may run outside a call. It runs without a GPU; anything it finds is named in
// the report and the task scores 0.
//
// References, an allow-list per task: what the student's own objects define; what the C, math, C++
// and GCC runtime libraries and the CUDA runtime export (read from the libraries themselves with
// nm -D), less what a kernel has no use for — the dynamic loader and process control (dl*, fork,
// exec*, system, popen, posix_spawn*, ptrace, syscall, kill, pthread_atfork), memory protection and
// mappings (mprotect, mmap, mremap, process_vm_*), prctl, signal handlers and timers (signal,
// sigaction, setitimer, alarm, timer_*), opening files (open*, fopen*, creat*, the fstreams,
// std::filesystem) and host callbacks on streams (cudaLaunchHostFunc, cudaStreamAddCallback); the
// compiler's glue (__cuda*, __nv*, _GLOBAL_OFFSET_TABLE_, __dso_handle, atexit/stat from
// libc_nonshared); and the harness names the rubric gives the task ("harness": prefixes such as
// "task4::", "attn::throw_cuda_error"). cuBLAS under any spelling, the harness's oracles, the loader:
// named.
//
// Definitions: a submission may not define a name the runtimes export (clock_gettime, write,
// operator new, cudaEventRecord, cudaDeviceSynchronize, …) — weak, strong, an alias or an asm label
// alike: in an executable, such a definition replaces the library's for every caller, the harness's
// own calls included; nor a strong definition of a name the harness defines weakly (it would win
// the link); nor an IFUNC (its resolver runs inside the loader). The template instantiations every
// C++ object carries as weak definitions (std:: ones included, some of which libstdc++ exports too)
// are fine: the harness's objects come first in a runner's link, so its copy is the one kept; one
// the harness lacks and a library exports is caught on the program (interposing_definitions).
//
// Outside the call: functions registered in .init_array/.ctors/.preinit_array (constructors) or
// .fini_array/.dtors (destructors) other than the compiler's own (C++ dynamic initialisation
// `_GLOBAL__sub_I_*`, CUDA's fatbinary registration `__sti____cudaRegisterAll`), and raw system
// call instructions (syscall, sysenter, int 0x80) in any code section.
#pragma once
#include <string>
#include <vector>

namespace grader {

// "file: symbol (why)" for every finding in `objects`; also an object the tools cannot read. `own`:
// every object of the submission (their definitions are allowed as references). `null_runner`: the
// task's null runner (the harness alone, built with symbols), whose weak definitions a student's
// strong one must not replace; empty when there is none.
std::vector<std::string> disallowed_symbols(const std::vector<std::string>& objects, const std::vector<std::string>& own,
                                            const std::vector<std::string>& harness_prefixes,
                                            const std::string& null_runner = "");

// Of `required` (prefixes of demangled names), those that no object of `objects` references: a part that must run on
// the student's other kernels calls them.
std::vector<std::string> missing_calls(const std::vector<std::string>& objects, const std::vector<std::string>& required);

// The same rule on the program that actually runs, whatever objects were named: every function the
// runner exports to the shared libraries (its dynamic symbol table — stripping keeps it) replaces the
// library's for every caller. "runner: name (why)" for each, less what the null runner exports too.
std::vector<std::string> interposing_definitions(const std::string& runner, const std::string& null_runner = "");

}  // namespace grader
