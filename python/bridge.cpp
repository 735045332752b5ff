// bridge.cpp — the C interface of libattnlab.so: the student's (or the reference's) Task 2, 4 and 5
// functions, and Task 4's backward bonus (4c: the forward with log-sum-exp, the backward), behind plain
// `extern "C"` calls, for the Python package python/attnlab (ctypes).
//
//     make python IMPL=skeleton|reference     # → build/<impl>/python/libattnlab.so
//     PYTHONPATH=python python3 -c "import attnlab; help(attnlab)"
//
// The library is linked from the same task sources the tests link (taskN/<impl>/*, compiled again
// with -fPIC under build/<impl>/python/), so Python runs exactly the kernels the grader judges.
//
// Every call takes the CUDA device index of its tensors, device pointers, plain ints, and a buffer
// the caller owns for an error message. It returns 0, or nonzero with the message written there
// (truncated to fit, always NUL-terminated). No C++ exception crosses this interface: each is
// caught here. Kernels launch on the legacy default stream of that device and the calls return
// without synchronising (as the task interfaces say); launch errors are reported at once, faults
// inside a kernel at the next synchronising call (attnlab_synchronize or torch's).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include "task2/task2.h"
#include "task4/task4.h"
#include "task4/task4_backward.h"
#include "task5/task5.h"

#ifndef ATTNLAB_IMPL
#define ATTNLAB_IMPL "unknown"
#endif

namespace {

void write_error(char* err, int err_len, const std::string& msg) {
    if (!err || err_len <= 0) return;
    const size_t n = std::min(msg.size(), size_t(err_len - 1));
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
}

// Runs `body` on `device`: 0 on success, 1 with the message on any C++ exception or CUDA error.
template <class F>
int guarded(const char* who, int device, char* err, int err_len, F&& body) {
    try {
        cudaError_t e = cudaSetDevice(device);
        if (e != cudaSuccess)
            throw std::runtime_error(std::string("cudaSetDevice(") + std::to_string(device) + "): " + cudaGetErrorString(e));
        body();
        // A bad launch configuration shows here; a fault inside a kernel at the next synchronising call.
        e = cudaGetLastError();
        if (e != cudaSuccess) throw std::runtime_error(std::string("after the launch: ") + cudaGetErrorString(e));
        return 0;
    } catch (const std::exception& ex) {
        write_error(err, err_len, std::string(who) + ": " + ex.what());
    } catch (...) {
        write_error(err, err_len, std::string(who) + ": an unknown C++ exception");
    }
    return 1;
}

}  // namespace

extern "C" {

// The interface's version: python/attnlab checks it before the first call (bump when a signature changes).
int attnlab_abi_version(void) { return 2; }

// Which implementation the library was built from: "skeleton" or "reference".
const char* attnlab_impl(void) { return ATTNLAB_IMPL; }

// The number of CUDA devices this library's runtime sees; -1 with the message when it sees none.
int attnlab_device_count(char* err, int err_len) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        write_error(err, err_len, std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e));
        return -1;
    }
    return n;
}

// Waits for every kernel on `device` and reports a fault inside any of them.
int attnlab_synchronize(int device, char* err, int err_len) {
    return guarded("synchronize", device, err, err_len, [] {
        const cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
    });
}

// Task 4: o [B, H, Sq, D] = softmax(q kᵀ / √D) v for q [B, H, Sq, D], k and v [B, H, Sk, D].
int attnlab_attention(int device, const float* q, const float* k, const float* v, float* o, int B, int H, int Sq, int Sk,
                      int D, int causal, char* err, int err_len) {
    return guarded("flash_attention_forward", device, err, err_len,
                   [&] { task4::flash_attention_forward(q, k, v, o, B, H, Sq, Sk, D, causal != 0); });
}

// Task 4c: o as attnlab_attention, and lse [B, H, Sq]: each row's log-sum-exp of its scaled scores (+inf
// for a row that sees no key), what the backward needs to recompute the probabilities.
int attnlab_attention_lse(int device, const float* q, const float* k, const float* v, float* o, float* lse, int B, int H,
                          int Sq, int Sk, int D, int causal, char* err, int err_len) {
    return guarded("flash_attention_forward_lse", device, err, err_len,
                   [&] { task4::flash_attention_forward_lse(q, k, v, o, lse, B, H, Sq, Sk, D, causal != 0); });
}

// Task 4c: dq [B, H, Sq, D], dk and dv [B, H, Sk, D] (overwritten) from q, k, v, the forward's o and lse,
// and the output's gradient dout [B, H, Sq, D].
int attnlab_attention_backward(int device, const float* q, const float* k, const float* v, const float* o,
                               const float* dout, const float* lse, float* dq, float* dk, float* dv, int B, int H, int Sq,
                               int Sk, int D, int causal, char* err, int err_len) {
    return guarded("flash_attention_backward", device, err, err_len, [&] {
        task4::flash_attention_backward(q, k, v, o, dout, lse, dq, dk, dv, B, H, Sq, Sk, D, causal != 0);
    });
}

// Task 5: o [B, H, 1, D] for the one query q [B, H, 1, D] against cache positions 0 … len−1.
int attnlab_decode(int device, const float* q, const float* k_cache, const float* v_cache, float* o, int B, int H,
                   int max_seq, int len, int D, char* err, int err_len) {
    return guarded("decode_attention", device, err, err_len,
                   [&] { task5::decode_attention(q, k_cache, v_cache, o, B, H, max_seq, len, D); });
}

// Task 2.1: out[r, :] = softmax(in[r, :]) for rows × cols (out may be in).
int attnlab_softmax(int device, const float* in, float* out, int rows, int cols, char* err, int err_len) {
    return guarded("softmax_batched", device, err, err_len, [&] { task2::softmax_batched(in, out, rows, cols); });
}

// Task 2.3: C[b] = A[b] · B[b], A [batch, M, K], B [batch, K, N].
int attnlab_gemm_nn(int device, const float* A, const float* B, float* C, int batch, int M, int N, int K, char* err,
                    int err_len) {
    return guarded("gemm_nn", device, err, err_len, [&] { task2::gemm_nn(A, B, C, batch, M, N, K); });
}

// Task 2.2: C[b] = A[b] · B[b]ᵀ, A [batch, M, K], B [batch, N, K].
int attnlab_gemm_nt(int device, const float* A, const float* B, float* C, int batch, int M, int N, int K, char* err,
                    int err_len) {
    return guarded("gemm_nt", device, err, err_len, [&] { task2::gemm_nt(A, B, C, batch, M, N, K); });
}

}  // extern "C"
