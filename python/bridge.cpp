// bridge.cpp — the C interface of libattnlab.so: the student's (or the reference's) Task 2, 4 and 5
// functions, and Task 4's backward bonus (4c: the forward with log-sum-exp, the backward), behind plain
// `extern "C"` calls, for the Python package python/attnlab (ctypes); the bf16 parts (4b's forward, 4d's forward with
// log-sum-exp and backward) on bf16 tensors.
//
//     make python IMPL=skeleton|reference     # → build/<impl>/python/libattnlab.so
//     pip install -e python/  (or the wheel make python writes), then python3 -c "import attnlab; help(attnlab)"
//
// The library is linked from the same task sources the tests link (taskN/<impl>/*, compiled again
// with -fPIC under build/<impl>/python/), so Python runs exactly the kernels the grader judges.
//
// Every call takes the CUDA device index of its tensors, torch's current stream on that device (a cudaStream_t
// as an integer; 0: the legacy default stream), device pointers and plain ints, and returns 0 — or nonzero, and
// then attnlab_last_error() hands over the message (kept per thread). No C++ exception crosses this interface:
// each is caught here. Kernels launch on the legacy default stream of that device (the task interfaces have no
// stream argument) and the calls return without synchronising; launch errors are reported at once, faults
// inside a kernel at the next synchronising call (attnlab_synchronize or torch's).
// Ordering with torch's stream, in the same call: when it is not the legacy default stream, the default stream
// first waits for everything queued on it (the inputs are ready), and after the launch it waits for the default
// stream (later work and frees see the outputs), whether the launch succeeded or not: stream-to-stream waits on
// an event, the host never blocks. A stream being captured into a CUDA graph is refused with an error (the legacy
// default stream cannot be captured). One C call per Python call: the checks of python/attnlab, then this.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>

#include "task2/task2.h"
#include "task4/task4.h"
#include "task4_backward/task4_backward.h"
#include "task4_bf16/task4_bf16.h"
#include "task4_bf16_backward/task4_bf16_backward.h"
#include "task5/task5.h"
#include "task5_paged/task5_paged.h"

#ifndef ATTNLAB_IMPL
#define ATTNLAB_IMPL "unknown"
#endif

namespace {

thread_local std::string last_error;  // the message of this thread's last failed call

// Orders the legacy default stream's work with `stream` (torch's current one) around a launch: see the header.
class OrderedWithStream {
public:
    OrderedWithStream(int device, uintptr_t stream) : stream_(reinterpret_cast<cudaStream_t>(stream)) {
        if (!stream_) return;
        cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
        check(cudaStreamIsCapturing(stream_, &capture), "cudaStreamIsCapturing");
        if (capture != cudaStreamCaptureStatusNone)
            throw std::runtime_error("cannot run inside a CUDA graph capture: the kernels launch on the legacy default "
                                     "stream, which a capture does not record");
        event_ = event_of(device);
        check(cudaEventRecord(event_, stream_), "cudaEventRecord");
        check(cudaStreamWaitEvent(cudaStreamLegacy, event_, 0), "cudaStreamWaitEvent");
    }
    ~OrderedWithStream() {  // also after a failed launch: whatever it queued is ordered before the stream's next work
        if (!stream_ || !event_) return;
        if (cudaEventRecord(event_, cudaStreamLegacy) == cudaSuccess) cudaStreamWaitEvent(stream_, event_, 0);
    }
    OrderedWithStream(const OrderedWithStream&) = delete;
    OrderedWithStream& operator=(const OrderedWithStream&) = delete;

private:
    static void check(cudaError_t e, const char* what) {
        if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
    }
    // One event per device and thread, made once: recorded and waited on within one call.
    static cudaEvent_t event_of(int device) {
        thread_local std::map<int, cudaEvent_t> events;
        cudaEvent_t& e = events[device];
        if (!e) check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        return e;
    }
    cudaStream_t stream_;
    cudaEvent_t event_ = nullptr;
};

// Runs `body` on `device`, ordered with `stream`: 0 on success, 1 with the message kept on any C++ exception or
// CUDA error.
template <class F>
int guarded(const char* who, int device, uintptr_t stream, F&& body) {
    try {
        cudaError_t e = cudaSetDevice(device);
        if (e != cudaSuccess)
            throw std::runtime_error(std::string("cudaSetDevice(") + std::to_string(device) + "): " + cudaGetErrorString(e));
        {
            OrderedWithStream ordered(device, stream);
            body();
        }
        // A bad launch configuration shows here; a fault inside a kernel at the next synchronising call.
        e = cudaGetLastError();
        if (e != cudaSuccess) throw std::runtime_error(std::string("after the launch: ") + cudaGetErrorString(e));
        return 0;
    } catch (const std::exception& ex) {
        last_error = std::string(who) + ": " + ex.what();
    } catch (...) {
        last_error = std::string(who) + ": an unknown C++ exception";
    }
    return 1;
}

// A bf16 tensor's pointer as the task interfaces take it (the C interface passes them untyped).
const __nv_bfloat16* bf16(const void* p) { return static_cast<const __nv_bfloat16*>(p); }
__nv_bfloat16* bf16(void* p) { return static_cast<__nv_bfloat16*>(p); }

}  // namespace

extern "C" {

// The interface's version: python/attnlab checks it before the first call (bump when a signature changes).
int attnlab_abi_version(void) { return 5; }

// Which implementation the library was built from: "skeleton" or "reference".
const char* attnlab_impl(void) { return ATTNLAB_IMPL; }

// This thread's last error message into err (truncated to fit, always NUL-terminated); its full length.
int attnlab_last_error(char* err, int err_len) {
    if (err && err_len > 0) {
        const size_t n = std::min(last_error.size(), size_t(err_len - 1));
        std::memcpy(err, last_error.data(), n);
        err[n] = '\0';
    }
    return int(last_error.size());
}

// The number of CUDA devices this library's runtime sees; -1 (the message kept) when it sees none.
int attnlab_device_count(void) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        last_error = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
        return -1;
    }
    return n;
}

// Waits for every kernel on `device` and reports a fault inside any of them.
int attnlab_synchronize(int device) {
    return guarded("synchronize", device, 0, [] {
        const cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
    });
}

// Task 4: o [B, H, Sq, D] = softmax(q kᵀ / √D) v for q [B, H, Sq, D], k and v [B, H, Sk, D].
int attnlab_attention(int device, uintptr_t stream, const float* q, const float* k, const float* v, float* o, int B, int H,
                      int Sq, int Sk, int D, int causal) {
    return guarded("flash_attention_forward", device, stream,
                   [&] { task4::flash_attention_forward(q, k, v, o, B, H, Sq, Sk, D, causal != 0); });
}

// Task 4's bf16 part (4b): attnlab_attention on bf16 tensors (__nv_bfloat16, passed as void*).
int attnlab_attention_bf16(int device, uintptr_t stream, const void* q, const void* k, const void* v, void* o, int B, int H,
                           int Sq, int Sk, int D, int causal) {
    return guarded("flash_attention_forward_bf16", device, stream, [&] {
        task4::flash_attention_forward_bf16(bf16(q), bf16(k), bf16(v), bf16(o), B, H, Sq, Sk, D, causal != 0);
    });
}

// Task 4d: attnlab_attention_bf16 that also writes lse [B, H, Sq] (float32), for the bf16 backward.
int attnlab_attention_lse_bf16(int device, uintptr_t stream, const void* q, const void* k, const void* v, void* o, float* lse,
                               int B, int H, int Sq, int Sk, int D, int causal) {
    return guarded("flash_attention_forward_bf16_lse", device, stream, [&] {
        task4::flash_attention_forward_bf16_lse(bf16(q), bf16(k), bf16(v), bf16(o), lse, B, H, Sq, Sk, D, causal != 0);
    });
}

// Task 4d: dq, dk, dv (bf16, overwritten) from bf16 q, k, v, o, dout and the float32 lse of attnlab_attention_lse_bf16.
int attnlab_attention_backward_bf16(int device, uintptr_t stream, const void* q, const void* k, const void* v, const void* o,
                                    const void* dout, const float* lse, void* dq, void* dk, void* dv, int B, int H, int Sq,
                                    int Sk, int D, int causal) {
    return guarded("flash_attention_backward_bf16", device, stream, [&] {
        task4::flash_attention_backward_bf16(bf16(q), bf16(k), bf16(v), bf16(o), bf16(dout), lse, bf16(dq), bf16(dk), bf16(dv), B, H,
                                             Sq, Sk, D, causal != 0);
    });
}

// Task 4c: o as attnlab_attention, and lse [B, H, Sq]: each row's log-sum-exp of its scaled scores (+inf
// for a row that sees no key), what the backward needs to recompute the probabilities.
int attnlab_attention_lse(int device, uintptr_t stream, const float* q, const float* k, const float* v, float* o, float* lse,
                          int B, int H, int Sq, int Sk, int D, int causal) {
    return guarded("flash_attention_forward_lse", device, stream,
                   [&] { task4::flash_attention_forward_lse(q, k, v, o, lse, B, H, Sq, Sk, D, causal != 0); });
}

// Task 4c: dq [B, H, Sq, D], dk and dv [B, H, Sk, D] (overwritten) from q, k, v, the forward's o and lse,
// and the output's gradient dout [B, H, Sq, D].
int attnlab_attention_backward(int device, uintptr_t stream, const float* q, const float* k, const float* v, const float* o,
                               const float* dout, const float* lse, float* dq, float* dk, float* dv, int B, int H, int Sq,
                               int Sk, int D, int causal) {
    return guarded("flash_attention_backward", device, stream, [&] {
        task4::flash_attention_backward(q, k, v, o, dout, lse, dq, dk, dv, B, H, Sq, Sk, D, causal != 0);
    });
}

// Task 5: o [B, H, 1, D] for the one query q [B, H, 1, D] against cache positions 0 … len−1.
int attnlab_decode(int device, uintptr_t stream, const float* q, const float* k_cache, const float* v_cache, float* o, int B,
                   int H, int max_seq, int len, int D) {
    return guarded("decode_attention", device, stream,
                   [&] { task5::decode_attention(q, k_cache, v_cache, o, B, H, max_seq, len, D); });
}

// Task 5 with one length per sequence: lens[b] positions of row b (the rows of q, caches and o are B apart
// by H·D, H·max_seq·D, H·D floats); one launch per row, all in this one call.
int attnlab_decode_rows(int device, uintptr_t stream, const float* q, const float* k_cache, const float* v_cache, float* o,
                        int B, int H, int max_seq, const int* lens, int D) {
    return guarded("decode_attention", device, stream, [&] {
        const size_t row = size_t(H) * D, cache_row = size_t(H) * max_seq * D;
        for (int b = 0; b < B; ++b)
            task5::decode_attention(q + b * row, k_cache + b * cache_row, v_cache + b * cache_row, o + b * row, 1, H, max_seq,
                                    lens[b], D);
    });
}

// Task 5's paged part (5b): o [B, H_q, D] bf16 from q [B, H_q, D] against the pages of k_pages, v_pages
// [num_pages, page_size, H_kv, D] (bf16) that the host tables page_table [B, pages_per_seq] and lengths [B] (int32) name.
int attnlab_paged_decode_bf16(int device, uintptr_t stream, const void* q, const void* k_pages, const void* v_pages, void* o,
                              const int* page_table, const int* lengths, int B, int H_q, int H_kv, int D, int page_size,
                              int num_pages, int pages_per_seq) {
    using bf16 = __nv_bfloat16;
    return guarded("paged_decode_bf16", device, stream, [&] {
        task5::paged_decode_bf16(static_cast<const bf16*>(q), static_cast<const bf16*>(k_pages), static_cast<const bf16*>(v_pages),
                                 static_cast<bf16*>(o), page_table, lengths, B, H_q, H_kv, D, page_size, num_pages, pages_per_seq);
    });
}

// Task 2.1: out[r, :] = softmax(in[r, :]) for rows × cols (out may be in).
int attnlab_softmax(int device, uintptr_t stream, const float* in, float* out, int rows, int cols) {
    return guarded("softmax_batched", device, stream, [&] { task2::softmax_batched(in, out, rows, cols); });
}

// Task 2.3: C[b] = A[b] · B[b], A [batch, M, K], B [batch, K, N].
int attnlab_gemm_nn(int device, uintptr_t stream, const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    return guarded("gemm_nn", device, stream, [&] { task2::gemm_nn(A, B, C, batch, M, N, K); });
}

// Task 2.2: C[b] = A[b] · B[b]ᵀ, A [batch, M, K], B [batch, N, K].
int attnlab_gemm_nt(int device, uintptr_t stream, const float* A, const float* B, float* C, int batch, int M, int N, int K) {
    return guarded("gemm_nt", device, stream, [&] { task2::gemm_nt(A, B, C, batch, M, N, K); });
}

}  // extern "C"
