// wgmma_selftest.cu — the two GEMMs of the Hopper rungs alone, against the CPU (course staff; not in the student
// kit): one warpgroup computes S = Q·Kᵀ (64 × 128, D = 128, both operands from 128-byte-swizzled shared memory) and
// O = P·V (P in registers as A fragments, V MN-major through its descriptor), the way hopper_bf16.cuh's gemm_qk and
// gemm_pv do, and writes both to global memory; S also with Q's fragments in registers (gemm_qk_rs). When a rung fails, this says whether the descriptors and fragment
// layouts are the cause, and which GEMM. The P·V product is also computed with V's two byte offsets (LBO, SBO)
// exchanged, the layout one could mistake for it: that one must fail (the test can tell them apart).
// Run by check_ladder_bf16 (`make check-ladder-task4-bf16 ARGS=selftest`); compute capability 9.0 only.
#include <random>
#include <vector>

#include "task4_bf16/ladder/hopper_bf16.cuh"
#include "task4_bf16/ladder/ladder_bf16.h"

namespace task4::ladder_bf16 {
namespace {

using namespace task4::hopper;
constexpr int D = 128, M = 64, N = 128;  // S: M × N, O: M × D, keys N

__global__ void __launch_bounds__(128) selftest_kernel(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* p,
                                                       const __nv_bfloat16* v, float* s_out, float* s_rs_out, float* o_out,
                                                       float* o_swapped) {
#if ATTNLAB_SM90A_DEVICE
    extern __shared__ unsigned char smem_raw[];
    const uint32_t sQ = (smem_u32(smem_raw) + 1023) & ~1023u, sK = sQ + M * D * 2, sV = sK + N * D * 2;
    for (int c = threadIdx.x; c < M * D / 8; c += 128)
        cp_async16(sQ + sw128_offset<M>(c / (D / 8), 8 * (c % (D / 8))), q + 8 * c, true);
    for (int c = threadIdx.x; c < N * D / 8; c += 128) {
        cp_async16(sK + sw128_offset<N>(c / (D / 8), 8 * (c % (D / 8))), k + 8 * c, true);
        cp_async16(sV + sw128_offset<N>(c / (D / 8), 8 * (c % (D / 8))), v + 8 * c, true);
    }
    cp_async_commit();
    cp_async_wait<0>();
    fence_proxy_async();
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

    float s[N / 2];
    wgmma_fence();
    gemm_qk<D, N, M>(s, sQ, sK);
    wgmma_commit();
    wgmma_wait<0>();
    pin(s);
    for (int i = 0; i < N / 8; ++i)
        for (int e = 0; e < 4; ++e) s_out[(16 * warp + g + 8 * (e >> 1)) * N + 8 * i + 2 * t + (e & 1)] = s[4 * i + e];
    // the same S with Q's A fragments in registers (ldmatrix from the swizzled tile, gemm_qk_rs)
    uint32_t qf[D / 16][4];
    load_q_fragments<D, M>(qf, sQ, 0);
    wgmma_fence();
    gemm_qk_rs<D, N>(s, qf, sK);
    wgmma_commit();
    wgmma_wait<0>();
    pin(s);
    for (int i = 0; i < N / 8; ++i)
        for (int e = 0; e < 4; ++e) s_rs_out[(16 * warp + g + 8 * (e >> 1)) * N + 8 * i + 2 * t + (e & 1)] = s[4 * i + e];

    // P's A fragments straight from global memory: keys 16kb…, rows g and g + 8 of this warp's 16
    uint32_t pf[N / 16][4];
    auto pk = [&](int row, int col) {
        const __nv_bfloat16* a = p + (16 * warp + row) * N + col;
        return uint32_t(__bfloat16_as_ushort(a[0])) | uint32_t(__bfloat16_as_ushort(a[1])) << 16;
    };
    for (int kb = 0; kb < N / 16; ++kb) {
        pf[kb][0] = pk(g, 16 * kb + 2 * t), pf[kb][1] = pk(g + 8, 16 * kb + 2 * t);
        pf[kb][2] = pk(g, 16 * kb + 8 + 2 * t), pf[kb][3] = pk(g + 8, 16 * kb + 8 + 2 * t);
    }
    for (int swapped = 0; swapped < 2; ++swapped) {
        float o[D / 2];
        for (int i = 0; i < D / 2; ++i) o[i] = 0.f;
        wgmma_fence();
        if (swapped) {
            const uint64_t vd = sw128_desc(sV, 1024, N * 128u);
            for (int kb = 0; kb < N / 16; ++kb) Wgmma<D>::rs(o, pf[kb], vd + kb * 16 * 128 / 16);
        } else {
            gemm_pv<D, N>(o, pf, sV);
        }
        wgmma_commit();
        wgmma_wait<0>();
        pin(o);
        float* out = swapped ? o_swapped : o_out;
        for (int i = 0; i < D / 8; ++i)
            for (int e = 0; e < 4; ++e) out[(16 * warp + g + 8 * (e >> 1)) * D + 8 * i + 2 * t + (e & 1)] = o[4 * i + e];
    }
#else
    __trap();
#endif
}

}  // namespace

// Returns the largest relative errors of S, S with Q in registers, O, and O with V's offsets swapped (each
// max |got − want| / max |want|).
std::array<double, 4> wgmma_selftest() {
    if (!device_is_sm90a()) throw std::runtime_error("wgmma_selftest: needs an sm_90a build on a compute capability 9.0 GPU");
    std::mt19937 rng(7);
    std::normal_distribution<float> nd;
    auto make = [&](size_t n) {
        std::vector<__nv_bfloat16> h(n);
        for (auto& x : h) x = __float2bfloat16(nd(rng));
        return h;
    };
    const auto hq = make(M * D), hk = make(N * D), hp = make(M * N), hv = make(N * D);
    __nv_bfloat16 *q, *k, *p, *v;
    float *s, *s2, *o, *o2;
    CUDA_CHECK(cudaMalloc(&q, hq.size() * 2));
    CUDA_CHECK(cudaMalloc(&k, hk.size() * 2));
    CUDA_CHECK(cudaMalloc(&p, hp.size() * 2));
    CUDA_CHECK(cudaMalloc(&v, hv.size() * 2));
    CUDA_CHECK(cudaMalloc(&s, M * N * 4));
    CUDA_CHECK(cudaMalloc(&s2, M * N * 4));
    CUDA_CHECK(cudaMalloc(&o, M * D * 4));
    CUDA_CHECK(cudaMalloc(&o2, M * D * 4));
    CUDA_CHECK(cudaMemcpy(q, hq.data(), hq.size() * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(k, hk.data(), hk.size() * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(p, hp.data(), hp.size() * 2, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(v, hv.data(), hv.size() * 2, cudaMemcpyHostToDevice));
    const int smem = (M + 2 * N) * D * 2 + 1024;
    CUDA_CHECK(cudaFuncSetAttribute(selftest_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    selftest_kernel<<<1, 128, smem>>>(q, k, p, v, s, s2, o, o2);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> gs(M * N), gs2(M * N), go(M * D), go2(M * D);
    CUDA_CHECK(cudaMemcpy(gs.data(), s, gs.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(gs2.data(), s2, gs2.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(go.data(), o, go.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(go2.data(), o2, go2.size() * 4, cudaMemcpyDeviceToHost));
    for (void* b : {(void*)q, (void*)k, (void*)p, (void*)v, (void*)s, (void*)s2, (void*)o, (void*)o2}) CUDA_CHECK(cudaFree(b));
    auto f = [](__nv_bfloat16 x) { return double(__bfloat162float(x)); };
    auto rel = [](const std::vector<float>& got, const std::vector<double>& want) {
        double e = 0, w = 0;
        for (size_t i = 0; i < got.size(); ++i) e = std::max(e, std::abs(got[i] - want[i])), w = std::max(w, std::abs(want[i]));
        return e / w;
    };
    std::vector<double> ws(M * N, 0.0), wo(M * D, 0.0);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            for (int c = 0; c < D; ++c) ws[i * N + j] += f(hq[i * D + c]) * f(hk[j * D + c]);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j)
            for (int c = 0; c < D; ++c) wo[i * D + c] += f(hp[i * N + j]) * f(hv[j * D + c]);
    return {rel(gs, ws), rel(gs2, ws), rel(go, wo), rel(go2, wo)};
}

}  // namespace task4::ladder_bf16
