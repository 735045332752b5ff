// device.h — the GPU the harness runs on: presence, properties, RAII buffers.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda/cuda_check.h"

namespace attn {

// True if a CUDA device can be used. Any error from cudaGetDeviceCount (no driver, "CUDA driver
// version is insufficient", no device) counts as "no CUDA device"; `why` gets CUDA's message.
bool has_cuda_device(std::string* why = nullptr);

struct DeviceInfo {
    std::string name;
    int sms = 0, cc_major = 0, cc_minor = 0;
    size_t l2_bytes = 0, global_bytes = 0, smem_per_block_optin = 0;
};
DeviceInfo device_info();  // of the current device

// An attribute of the device current at the first call, asked once per process and attribute (the course runs one GPU
// a process): launch heuristics read them on every call. Inline: the Python bridge's library links the kernels without
// device.cpp.
template <cudaDeviceAttr A>
inline int cached_device_attribute() {
    static const int value = [] {
        int dev = 0, v = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        CUDA_CHECK(cudaDeviceGetAttribute(&v, A, dev));
        return v;
    }();
    return value;
}
inline int sm_count() { return cached_device_attribute<cudaDevAttrMultiProcessorCount>(); }

// Empty when the current GPU has bf16 tensor cores (mma.sync m16n8k16 bf16: sm_80 or newer); else why not, naming the GPU.
// Asked once a process: the bf16 entry points check it on every call, and cudaGetDeviceProperties costs tens to
// hundreds of microseconds of host time (4d's backward asked it each call: a training step's host time).
inline const std::string& missing_bf16_mma() {
    static const std::string why = [] {
        if (cached_device_attribute<cudaDevAttrComputeCapabilityMajor>() >= 8) return std::string();
        int dev = 0;
        CUDA_CHECK(cudaGetDevice(&dev));
        cudaDeviceProp prop{};
        CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
        return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
               ") has no bf16 tensor cores (mma.sync m16n8k16 bf16 needs sm_80 or newer)";
    }();
    return why;
}
// Throws std::runtime_error "<who>: <why>" when the current GPU has no bf16 tensor cores (missing_bf16_mma).
inline void require_bf16_mma(const std::string& who) {
    if (!missing_bf16_mma().empty()) throw std::runtime_error(who + ": " + missing_bf16_mma());
}

// A stream-ordered memory pool of the current device that keeps what is freed into it (its release threshold at the
// maximum), for a program that allocates and frees one shape's buffers after another: the next shape reuses memory
// already mapped, as torch's caching allocator does and as a server's pool allocated once is. Memory cudaFree gave back
// to the driver and cudaMalloc mapped again made 5b's decode read the ragged batch 13 % slower (docs/perf.md, "5b's
// ragged batch: the benchmark's own cudaFree"). A buffer takes it by name (DeviceBuffer(n, pool)); nothing else changes.
class KeptPool {
public:
    KeptPool() {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        CUDA_CHECK(cudaGetDevice(&props.location.id));
        CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
        unsigned long long keep_all = ~0ULL;
        CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep_all));
    }
    ~KeptPool() { cudaMemPoolDestroy(pool_); }  // memory still lent out goes back when its buffers are freed
    KeptPool(const KeptPool&) = delete;
    KeptPool& operator=(const KeptPool&) = delete;
    cudaMemPool_t get() const { return pool_; }

private:
    cudaMemPool_t pool_ = nullptr;
};

// A device allocation of n elements of T, freed on destruction: by cudaMalloc, or from a KeptPool. Move-only.
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t n) : n_(n) {
        if (n) CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
    }
    DeviceBuffer(size_t n, const KeptPool& pool) : n_(n), pool_(pool.get()) {
        if (!n) return;
        // in stream order on the default stream, then waited for: ready for any stream and for synchronous copies
        CUDA_CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void**>(&p_), n * sizeof(T), pool_, 0));
        CUDA_CHECK(cudaStreamSynchronize(0));
    }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
    ~DeviceBuffer() {
        if (p_ && pool_) cudaFreeAsync(p_, 0);
        else if (p_) cudaFree(p_);
    }
    DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_), pool_(o.pool_) { o.p_ = nullptr, o.n_ = 0; }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        std::swap(p_, o.p_), std::swap(n_, o.n_), std::swap(pool_, o.pool_);
        return *this;
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* get() const { return p_; }
    size_t size() const { return n_; }
    size_t bytes() const { return n_ * sizeof(T); }
    void upload(const std::vector<T>& h) {
        if (h.size() != n_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
        CUDA_CHECK(cudaMemcpy(p_, h.data(), bytes(), cudaMemcpyHostToDevice));
    }
    // The first h.size() elements (a buffer sized for the most a call needs, filled to what this one has).
    void upload_prefix(const std::vector<T>& h) {
        if (h.size() > n_) throw std::invalid_argument("DeviceBuffer::upload_prefix: more elements than the buffer holds");
        if (!h.empty()) CUDA_CHECK(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    std::vector<T> download() const {
        std::vector<T> h(n_);
        CUDA_CHECK(cudaMemcpy(h.data(), p_, bytes(), cudaMemcpyDeviceToHost));
        return h;
    }
    // Every byte 0xFF: as float that is NaN, so unwritten outputs are caught.
    void poison() { CUDA_CHECK(cudaMemset(p_, 0xFF, bytes())); }

private:
    T* p_ = nullptr;
    size_t n_ = 0;
    cudaMemPool_t pool_ = nullptr;  // set: from a KeptPool, freed into it
};

}  // namespace attn
