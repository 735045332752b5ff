// kernels.cu — see kernels.h. Plain, memory-bound kernels: one thread per element, or one block
// per row where a row is reduced (LayerNorm, argmax, top-k). Built into every binary of Tasks 6
// and 7 by the Makefile.
#include "common/llm/kernels.h"

#include <cfloat>
#include <cstddef>
#include <stdexcept>

#include "common/cuda/cuda_check.h"

namespace llm {
namespace {

constexpr int kThreads = 256;
unsigned blocks_for(size_t n) { return unsigned((n + kThreads - 1) / kThreads); }

// Sum over the block (blockDim.x a multiple of 32, ≤ 1024); every thread gets the total.
__device__ float block_sum(float v) {
    __shared__ float part[32];
    __syncthreads();  // `part` may still be read from the previous call
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    float total = 0;
    for (int w = 0; w < int(blockDim.x >> 5); ++w) total += part[w];
    return total;
}

// (value, index) ordered by value descending, then index ascending: a comes first.
__device__ bool before(float av, int ai, float bv, int bi) { return av > bv || (av == bv && ai < bi); }

// The first (value, index) of the block in that order, among candidates after (after_v, after_i).
__device__ void block_first(const float* row, int V, float after_v, int after_i, float& best_v, int& best_i) {
    __shared__ float sv[32];
    __shared__ int si[32];
    best_v = -FLT_MAX, best_i = V;
    for (int j = threadIdx.x; j < V; j += blockDim.x) {
        const float x = row[j];
        if (before(after_v, after_i, x, j) && before(x, j, best_v, best_i)) best_v = x, best_i = j;
    }
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, best_v, o);
        const int oi = __shfl_xor_sync(0xffffffffu, best_i, o);
        if (before(ov, oi, best_v, best_i)) best_v = ov, best_i = oi;
    }
    __syncthreads();
    if ((threadIdx.x & 31) == 0) sv[threadIdx.x >> 5] = best_v, si[threadIdx.x >> 5] = best_i;
    __syncthreads();
    best_v = sv[0], best_i = si[0];
    for (int w = 1; w < int(blockDim.x >> 5); ++w)
        if (before(sv[w], si[w], best_v, best_i)) best_v = sv[w], best_i = si[w];
}

__global__ void embed_kernel(const int* history, int stride, int start, int S, const float* tok, const float* pos,
                             int vocab, int width, float* x, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const size_t t = i / width;
        const int j = int(i % width), b = int(t / S), s = int(t % S);
        int id = history[size_t(b) * stride + start + s];
        if (id < 0 || id >= vocab) id = 0;  // ids are checked on the host; never read out of bounds
        x[i] = tok[size_t(id) * width + j] + (pos ? pos[size_t(start + s) * width + j] : 0.f);
    }
}

__global__ void layernorm_kernel(const float* x, const float* gamma, const float* beta, float* y, int width, float eps,
                                 int in_step, int in_offset) {
    const float* in = x + (size_t(blockIdx.x) * in_step + in_offset) * width;
    float* out = y + size_t(blockIdx.x) * width;
    float s = 0;
    for (int j = threadIdx.x; j < width; j += blockDim.x) s += in[j];
    const float mean = block_sum(s) / width;
    float ss = 0;
    for (int j = threadIdx.x; j < width; j += blockDim.x) ss += (in[j] - mean) * (in[j] - mean);
    const float rstd = rsqrtf(block_sum(ss) / width + eps);
    for (int j = threadIdx.x; j < width; j += blockDim.x) out[j] = (in[j] - mean) * rstd * gamma[j] + beta[j];
}

__global__ void split_heads_kernel(const float* qkv, const float* bias, const float* cosines, const float* sines, int S,
                                   int H, int D, int start, float* q, float* k, float* v, size_t n) {
    const int half = D / 2;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const int c = int(i % half);
        const size_t rest = i / half;
        const int h = int(rest % H);
        const size_t t = rest / H;  // token b·S + s
        const int s = int(t % S), b = int(t / S);
        const size_t src = t * 3 * H * D + size_t(h) * D, dst = ((size_t(b) * H + h) * S + s) * D;
        float* outs[3] = {q, k, v};
        for (int part = 0; part < 3; ++part) {
            const size_t off = src + size_t(part) * H * D;
            const int bo = part * H * D + h * D;
            float x1 = qkv[off + c] + (bias ? bias[bo + c] : 0.f), x2 = qkv[off + c + half] + (bias ? bias[bo + c + half] : 0.f);
            if (cosines && part < 2) {
                const float cs = cosines[size_t(start + s) * half + c], sn = sines[size_t(start + s) * half + c];
                const float r1 = x1 * cs - x2 * sn, r2 = x2 * cs + x1 * sn;
                x1 = r1, x2 = r2;
            }
            outs[part][dst + c] = x1, outs[part][dst + c + half] = x2;
        }
    }
}

__global__ void merge_heads_kernel(const float* o, int H, int S, int D, float* y, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const int d = int(i % D);
        const size_t rest = i / D;
        const int h = int(rest % H);
        const size_t t = rest / H;
        const int s = int(t % S), b = int(t / S);
        y[i] = o[((size_t(b) * H + h) * S + s) * D + d];
    }
}

__global__ void swiglu_kernel(const float* gu, float* act, int F, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const size_t t = i / F, j = i % F;
        const float g = gu[t * 2 * F + j], u = gu[t * 2 * F + F + j];
        act[i] = g / (1.f + expf(-g)) * u;
    }
}

__global__ void bias_gelu_kernel(float* x, const float* bias, int F, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        const float a = x[i] + bias[i % F];
        x[i] = 0.5f * a * (1.f + tanhf(0.7978845608028654f * (a + 0.044715f * a * a * a)));
    }
}

__global__ void add_bias_kernel(float* x, const float* bias, int F, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        x[i] += bias[i % F];
}

__global__ void argmax_kernel(const float* logits, int V, int* history, int stride, int col) {
    float v;
    int i;
    block_first(logits + size_t(blockIdx.x) * V, V, FLT_MAX, -1, v, i);
    if (threadIdx.x == 0) history[size_t(blockIdx.x) * stride + col] = i < V ? i : 0;
}

__device__ uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

__global__ void top_k_kernel(const float* logits, int V, int k, float temperature, uint64_t seed, int* history,
                             int stride, int col) {
    __shared__ float top_v[64];
    __shared__ int top_i[64];
    const float* row = logits + size_t(blockIdx.x) * V;
    float v = FLT_MAX;
    int idx = -1;
    for (int j = 0; j < k; ++j) {
        block_first(row, V, v, idx, v, idx);
        if (threadIdx.x == 0) top_v[j] = v, top_i[j] = idx;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    float total = 0;
    for (int j = 0; j < k; ++j) total += expf((top_v[j] - top_v[0]) / temperature);
    const uint64_t bits = mix(seed ^ mix(uint64_t(col) * 0x632BE59BD9B4E019ull + blockIdx.x));
    float u = float(bits >> 40) * (1.0f / 16777216.0f) * total;
    int pick = top_i[k - 1];
    for (int j = 0; j < k; ++j) {
        u -= expf((top_v[j] - top_v[0]) / temperature);
        if (u < 0) {
            pick = top_i[j];
            break;
        }
    }
    history[size_t(blockIdx.x) * stride + col] = pick < V ? pick : 0;
}

}  // namespace

void embed(const int* history, int stride, int B, int start, int S, const float* tok_emb, const float* pos_emb, int vocab,
           int width, float* x) {
    const size_t n = size_t(B) * S * width;
    embed_kernel<<<blocks_for(n), kThreads>>>(history, stride, start, S, tok_emb, pos_emb, vocab, width, x, n);
    CUDA_CHECK_LAUNCH();
}

void layernorm(const float* x, const float* gamma, const float* beta, float* y, int rows, int width, float eps, int in_step,
               int in_offset) {
    layernorm_kernel<<<rows, width >= 1024 ? 512 : 256>>>(x, gamma, beta, y, width, eps, in_step, in_offset);
    CUDA_CHECK_LAUNCH();
}

void split_heads(const float* qkv, const float* bias, const float* rope_cos, const float* rope_sin, int B, int S, int H,
                 int D, int start, float* q, float* k, float* v) {
    const size_t n = size_t(B) * S * H * (D / 2);
    split_heads_kernel<<<blocks_for(n), kThreads>>>(qkv, bias, rope_cos, rope_sin, S, H, D, start, q, k, v, n);
    CUDA_CHECK_LAUNCH();
}

void merge_heads(const float* o, int B, int H, int S, int D, float* y) {
    const size_t n = size_t(B) * S * H * D;
    merge_heads_kernel<<<blocks_for(n), kThreads>>>(o, H, S, D, y, n);
    CUDA_CHECK_LAUNCH();
}

void swiglu(const float* gu, float* act, int T, int F) {
    const size_t n = size_t(T) * F;
    swiglu_kernel<<<blocks_for(n), kThreads>>>(gu, act, F, n);
    CUDA_CHECK_LAUNCH();
}

void bias_gelu(float* x, const float* bias, int T, int F) {
    const size_t n = size_t(T) * F;
    bias_gelu_kernel<<<blocks_for(n), kThreads>>>(x, bias, F, n);
    CUDA_CHECK_LAUNCH();
}

void add_bias(float* x, const float* bias, int T, int F) {
    const size_t n = size_t(T) * F;
    add_bias_kernel<<<blocks_for(n), kThreads>>>(x, bias, F, n);
    CUDA_CHECK_LAUNCH();
}

void argmax_to(const float* logits, int B, int V, int* history, int stride, int col) {
    argmax_kernel<<<B, 1024>>>(logits, V, history, stride, col);
    CUDA_CHECK_LAUNCH();
}

void sample_top_k_to(const float* logits, int B, int V, int k, float temperature, uint64_t seed, int* history, int stride,
                     int col) {
    if (k < 1 || k > 64 || k > V) throw std::invalid_argument("sample_top_k: k must be in 1 … min(64, vocab)");
    if (!(temperature > 0)) throw std::invalid_argument("sample_top_k: temperature must be > 0");
    top_k_kernel<<<B, 1024>>>(logits, V, k, temperature, seed, history, stride, col);
    CUDA_CHECK_LAUNCH();
}

}  // namespace llm
