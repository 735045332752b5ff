// launch_log_runner.cpp — the runner's side of launch_log.h: CUPTI's callback on each driver launch writes the grid, the
// block and the kernel's resources into the page the trusted side reads. CUPTI is loaded (dlopen) only when a request
// asks for the log, and only launches made inside the student's call are recorded (Recording), not the harness's own.
#include <cuda.h>
#include <cupti.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/remote/launch_log.h"
#include "common/remote/launch_log_runner.h"

namespace attn::remote::launch_log {
namespace {

Page* g_page = nullptr;
std::atomic<bool> g_recording{false};
bool g_loaded = false;
CUpti_SubscriberHandle g_subscriber{};
using EnableCallbackFn = CUptiResult (*)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
EnableCallbackFn g_enable_callback = nullptr;
CUresult (*g_func_attribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
CUresult (*g_occupancy)(int*, CUfunction, int, size_t) = nullptr;
CUresult (*g_ctx_device)(CUdevice*) = nullptr;
CUresult (*g_device_attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;

constexpr CUpti_CallbackId kLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,            CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz};

void say_unavailable(const char* why) {
    if (g_page) std::snprintf(g_page->unavailable, sizeof g_page->unavailable, "%s", why);
}

void set_name(Launch& l, const char* symbol) {
    l.name[0] = 0;
    if (!symbol) return;
    int status = 0;
    char* readable = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
    std::snprintf(l.name, sizeof l.name, "%s", status == 0 && readable ? readable : symbol);
    std::free(readable);
}

void record(CUfunction f, const char* symbol, const unsigned grid[3], const unsigned block[3], unsigned dynamic_smem, bool graph) {
    Launch& l = g_page->latest[g_page->count % kKept];
    std::memset(static_cast<void*>(&l), 0, sizeof l);
    l.graph = graph;
    std::memcpy(l.grid, grid, sizeof l.grid), std::memcpy(l.block, block, sizeof l.block);
    l.dynamic_smem = dynamic_smem;
    l.regs = l.blocks_per_sm = -1;
    if (!graph) set_name(l, symbol);
    int value = 0;
    if (f && g_func_attribute) {
        if (g_func_attribute(&value, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS) l.regs = value;
        if (g_func_attribute(&value, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS) l.static_smem = unsigned(value);
    }
    const int threads = int(block[0] * block[1] * block[2]);
    if (f && g_occupancy && g_occupancy(&value, f, threads, dynamic_smem) == CUDA_SUCCESS) l.blocks_per_sm = value;
    CUdevice dev = 0;
    if (!g_page->sm_count && g_ctx_device && g_device_attribute && g_ctx_device(&dev) == CUDA_SUCCESS &&
        g_device_attribute(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev) == CUDA_SUCCESS)
        g_page->sm_count = unsigned(value);
    ++g_page->count;
}

// The launch functions with grid and block as arguments share their first fields (f, gridDim XYZ, blockDim XYZ, shared).
template <class Params>
void record_plain(const void* params, const char* symbol) {
    const auto* p = static_cast<const Params*>(params);
    const unsigned grid[3] = {p->gridDimX, p->gridDimY, p->gridDimZ}, block[3] = {p->blockDimX, p->blockDimY, p->blockDimZ};
    record(p->f, symbol, grid, block, p->sharedMemBytes, false);
}

template <class Params>
void record_ex(const void* params, const char* symbol) {
    const auto* p = static_cast<const Params*>(params);
    if (!p->config) return;
    const CUlaunchConfig& c = *p->config;
    const unsigned grid[3] = {c.gridDimX, c.gridDimY, c.gridDimZ}, block[3] = {c.blockDimX, c.blockDimY, c.blockDimZ};
    record(p->f, symbol, grid, block, c.sharedMemBytes, false);
}

void CUPTIAPI on_launch(void*, CUpti_CallbackDomain, CUpti_CallbackId id, const void* data) {
    const auto* cb = static_cast<const CUpti_CallbackData*>(data);
    if (!g_page || !g_recording.load(std::memory_order_relaxed) || cb->callbackSite != CUPTI_API_ENTER) return;
    const unsigned none[3] = {0, 0, 0};
    switch (id) {
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel: return record_plain<cuLaunchKernel_params>(cb->functionParams, cb->symbolName);
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
            return record_plain<cuLaunchKernel_ptsz_params>(cb->functionParams, cb->symbolName);
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
            return record_plain<cuLaunchCooperativeKernel_params>(cb->functionParams, cb->symbolName);
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
            return record_plain<cuLaunchCooperativeKernel_ptsz_params>(cb->functionParams, cb->symbolName);
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: return record_ex<cuLaunchKernelEx_params>(cb->functionParams, cb->symbolName);
        case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
            return record_ex<cuLaunchKernelEx_ptsz_params>(cb->functionParams, cb->symbolName);
        default: return record(nullptr, nullptr, none, none, 0, true);  // a graph
    }
}

void* open_first(std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
    return nullptr;
}

// Loads CUPTI and subscribes; false (and the page says why) where it cannot.
bool load() {
    if (g_loaded) return true;
    void* cupti = open_first({"libcupti.so.13", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13",
                              "/usr/local/cuda/lib64/libcupti.so.13", "/usr/local/cuda/lib/libcupti.so.13", "libcupti.so"});
    if (!cupti) return say_unavailable("CUPTI (libcupti.so.13) is not installed where the runner can load it"), false;
    void* cuda = open_first({"libcuda.so.1"});
    if (cuda) {
        g_func_attribute = reinterpret_cast<decltype(g_func_attribute)>(dlsym(cuda, "cuFuncGetAttribute"));
        g_occupancy = reinterpret_cast<decltype(g_occupancy)>(dlsym(cuda, "cuOccupancyMaxActiveBlocksPerMultiprocessor"));
        g_ctx_device = reinterpret_cast<decltype(g_ctx_device)>(dlsym(cuda, "cuCtxGetDevice"));
        g_device_attribute = reinterpret_cast<decltype(g_device_attribute)>(dlsym(cuda, "cuDeviceGetAttribute"));
    }
    using SubscribeFn = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
    const auto subscribe = reinterpret_cast<SubscribeFn>(dlsym(cupti, "cuptiSubscribe"));
    g_enable_callback = reinterpret_cast<EnableCallbackFn>(dlsym(cupti, "cuptiEnableCallback"));
    if (!subscribe || !g_enable_callback) return say_unavailable("this CUPTI has no callback API"), false;
    if (const CUptiResult r = subscribe(&g_subscriber, on_launch, nullptr); r != CUPTI_SUCCESS) {
        char why[120];
        std::snprintf(why, sizeof why, "CUPTI refused a subscriber (error %d: a profiler already attached?)", int(r));
        return say_unavailable(why), false;
    }
    for (CUpti_CallbackId id : kLaunches) g_enable_callback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    return g_loaded = true;
}

}  // namespace

void attach_page() {
    void* p = mmap(nullptr, sizeof(Page), PROT_READ | PROT_WRITE, MAP_SHARED, kFd, 0);
    if (p != MAP_FAILED && static_cast<Page*>(p)->magic == kMagic) g_page = static_cast<Page*>(p);
}

void prepare(bool wanted) {
    if (wanted && g_page) load();
}

Recording::Recording() {
    if (!g_loaded || !g_page) return;
    g_page->watched = 1;
    g_recording.store(true, std::memory_order_relaxed);
}
Recording::~Recording() { g_recording.store(false, std::memory_order_relaxed); }

}  // namespace attn::remote::launch_log
