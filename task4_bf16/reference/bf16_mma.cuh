// bf16_mma.cuh — the mma.sync primitives of Task 4's bf16 reference (flash_attention_bf16.cu, rung 4 of the bf16
// ladder), shared with the ladder's rungs 2 and 3 (task4_bf16/ladder/mma_bf16.cu). Course staff material, not in
// the student kit: the skeleton's plan is WMMA (task4/README.md, "Bonus: bf16 on tensor cores").
//   Params                 a launch's pointers, lengths, causal flag and log2(e)/√D (and lse, when it is wanted)
//   row_lse                a row's log-sum-exp from its running max and sum
//   cp_async16 / commit / wait, ldmatrix_x4 (.trans), mma_bf16 (m16n8k16, bf16 in, fp32 out), pack_bf16
//   tile_offset<D, SWIZZLE> where 16-byte chunk c of row r of a [rows][D] tile lives: plain, or at chunk
//                          c ^ (r mod 8), so that the 8 rows an ldmatrix reads hit 8 different bank groups
// Every function is __forceinline__: the kernels that include it compile as if it were written in them.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace task4::bf16_detail {

struct Params {
    const __nv_bfloat16 *q, *k, *v;
    __nv_bfloat16* o;
    int Sq, Sk;
    bool causal;
    float scale_log2;     // log2(e)/√D: exp(x/√D) = exp2(x · scale_log2)
    float* lse = nullptr;  // [B·H][Sq]: each row's log-sum-exp, written when set (4d's forward for training)
};

// A row's natural log-sum-exp from its running max m (of the scores times log2(e)/√D) and its sum l of exp2(· − m):
// log Σ exp(s/√D) = (m + log2 l)·ln 2; +∞ for a row that saw no key (l = 0), so that exp(s − lse) = 0 in a backward.
__device__ __forceinline__ float row_lse(float m, float l) {
    return l > 0.f ? (m + log2f(l)) * 0.6931471805599453f : INFINITY;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
// c += a·b, m16n8k16, a row-major (16×16 bf16), b column-major (16×8 bf16), c fp32
__device__ __forceinline__ void mma_bf16(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();  // bf16 mma needs sm_80; the host side refuses older GPUs before launching
#endif
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x (low 16 bits) = lo
    return *reinterpret_cast<const unsigned*>(&h);
}

// Element offset of 16-byte chunk `chunk` of row `row` in a [rows][D] bf16 tile.
template <int D, bool SWIZZLE>
__device__ __forceinline__ int tile_offset(int row, int chunk) {
    return row * D + (SWIZZLE ? (chunk ^ (row & 7)) : chunk) * 8;
}

}  // namespace task4::bf16_detail
