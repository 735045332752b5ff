// symbols.h — what a student's object files may reference: an allow-list per task, not a deny-list.
//
// Allowed: what the student's own objects define; what the C, math, C++ and GCC runtime libraries
// and the CUDA runtime export (read from the libraries themselves with nm -D), less the dynamic
// loader and process control (dl*, fork, exec*, system, popen, posix_spawn*, ptrace, syscall,
// kill, pthread_atfork); the compiler's own glue (__cuda*, __nv*, _GLOBAL_OFFSET_TABLE_,
// __dso_handle, and atexit/stat from libc_nonshared); and the harness names the rubric gives the
// task ("harness": name prefixes such as "attn::throw_cuda_error" — what CUDA_CHECK calls — "task4::"). Anything else — cuBLAS under any spelling, the harness's
// oracles, the loader — is named in the report and the task scores 0.
#pragma once
#include <string>
#include <vector>

namespace grader {

// "file: symbol (why)" for every reference of `objects` outside the allow-list; also an object nm
// cannot read. `own`: every object of the submission (their definitions are allowed).
std::vector<std::string> disallowed_symbols(const std::vector<std::string>& objects, const std::vector<std::string>& own,
                                            const std::vector<std::string>& harness_prefixes);

}  // namespace grader
