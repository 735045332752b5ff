// launch_log.h — the kernels a runner launched in its current call: grid, block, shared memory, registers, and how
// many such blocks one SM holds. The runner records them (CUPTI's callback on each driver launch, launch_log_runner.cpp)
// into one page of memory the trusted side shares with it (a sealed memfd, fd 5 of the runner); the trusted side reads it
// when a call times out ("1 block of 32 threads for 132 SMs") and after the one call it probes at each timed shape.
//
// Diagnostic only. The runner's process writes the page, so it may say anything: nothing read from it earns or costs a
// point, and the trusted side copies it, bounds every number and prints only printable text. A request asks for the
// log with "launch_log": true in its head (runner.cpp sets it for every request but the timed ones: a timed request
// never has CUPTI in its process).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace attn::remote::launch_log {

constexpr uint32_t kMagic = 0x4c4e4c31;  // "1LNL"
constexpr int kKept = 4;                 // the latest launches of a call
constexpr int kFd = 5;                   // the page, in the runner

struct Launch {
    uint32_t grid[3], block[3];
    uint32_t dynamic_smem, static_smem;  // bytes
    int32_t regs;                        // per thread; -1 unknown
    int32_t blocks_per_sm;               // the most such blocks one SM holds at once (CUDA's occupancy); -1 unknown
    char name[160];                      // demangled, cut short; "" for a CUDA graph
    uint32_t graph;                      // 1: a CUDA graph launch (its kernels are not listed)
};

struct Page {
    uint32_t magic;
    uint32_t sm_count;  // the device's SMs; 0 unknown
    uint32_t watched;   // 1 once a student call of this request ran with the log on (else the page says nothing)
    uint32_t spare;
    uint64_t count;     // launches recorded in this call; launch i sits in latest[i % kKept]
    char unavailable[160];  // why nothing is recorded (no CUPTI here, a profiler already attached), or ""
    Launch latest[kKept];
};

// ---- the trusted side (launch_log.cpp) ----

// A fresh page: a memfd of sizeof(Page), sealed against shrinking (a runner cannot make this process's reads fault),
// mapped here. Returns its fd (to become the runner's fd 5), or -1 where memfds are not available.
int create_page();
// Empties the mapped page before a request (count = 0, nothing unavailable).
void reset_page();
// What the page says about the current call, as sentences for a student ("" when there is no page or no log was asked).
// `hung`: the call timed out, so a call that launched nothing hung on the CPU (said); else (a CUDA error) nothing is said
// of a call that launched nothing.
std::string describe_current(bool hung = true);

// The sentences for one page (a copy): the test of this file's wording.
std::string describe(const Page& page, bool hung = true);

// Every kernel of the current call (a finished one: the speed report's table), each distinct kernel once, in the order
// launched, of the latest kKept launches: "2 launches: `decode_kernel<128>`: grid …; `combine_kernel`: grid …".
std::string list_current();
std::string list(const Page& page);

}  // namespace attn::remote::launch_log
