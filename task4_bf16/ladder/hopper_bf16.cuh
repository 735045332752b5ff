// hopper_bf16.cuh — what the Hopper rungs of the bf16 ladder share (course staff; not in the student kit): the
// sm_90a instructions as inline PTX, one small wrapper each, the online softmax on a wgmma accumulator, and the
// host side of TMA (a CUtensorMap per tensor). Rungs 6–9 (wgmma_bf16.cu, tma_bf16.cu, warp_specialized_bf16.cu,
// pingpong_bf16.cuh) include it; task4_bf16/ladder/ladder_bf16.h lists them.
//
// Why raw PTX and not CuTe. CUTLASS's C++ headers (CuTe) are on PyPI inside `nvidia-cutlass` (4.2 carries
// cutlass_library/source/include/cute/…; Debian has no package), and FlashAttention-3 is written with them. Here
// every instruction a rung adds is one visible line — a descriptor is 64 bits built by one function, a TMA copy
// is one asm statement — so each rung reads as the lesson it is; the whole file is a few hundred lines instead of
// a template library, and it builds in seconds on the course machine. The layouts below are the ones CuTe's
// GMMA atoms describe (Layout_K_SW128_Atom, Layout_MN_SW128_Atom): the comments say which.
//
// Build: these need the sm_90a target (wgmma, setmaxnreg): nvcc -gencode arch=compute_90a,code=sm_90a …; the
// Makefile compiles the Hopper rungs with sm_80 + sm_90a and -DATTNLAB_SM90A=1 (the sm_80 pass compiles every
// kernel body to a trap; the host dispatches on the device's compute capability, 9.0 only).
#pragma once
#include <cuda.h>          // CUtensorMap and its enums (types only: nothing is linked from libcuda)
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"  // cached_device_attribute
#include "task4_bf16/reference/bf16_mma.cuh"  // row_lse: one formula for the lse of both forwards

// The device pass that may use wgmma, setmaxnreg and TMA: sm_90a (FEAT_SM90_ALL is defined only for "a" targets).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define ATTNLAB_SM90A_DEVICE 1
#else
#define ATTNLAB_SM90A_DEVICE 0
#endif

namespace task4::hopper {

// What every Hopper rung's kernel gets: the four tensors as TMA descriptors (rung 6 reads its pointers instead),
// passed by value as a __grid_constant__ parameter so that their address can be given to cp.async.bulk.tensor.
struct Params {
    CUtensorMap tq, tk, tv, to;  // q, k, v: boxes of [rows][64 columns]; o: [64 rows][64 columns]
    const __nv_bfloat16 *q, *k, *v;
    __nv_bfloat16* o;
    int Sq, Sk;
    bool causal;
    float scale_log2;     // log2(e)/√D: exp(x/√D) = exp2(x · scale_log2)
    float* lse = nullptr;  // [BH][Sq]: each row's log-sum-exp, written when set (rung 10 only)
};

// ---- shared memory, barriers, fences ---------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// The 128-byte-swizzled tile layout that TMA writes (CU_TENSOR_MAP_SWIZZLE_128B) and wgmma reads (layout type 1):
// a [ROWS][D] bf16 tile is D/64 column blocks of [ROWS][64] (128 bytes a row); 16-byte chunk c of row r of a block
// lives at chunk c ^ (r mod 8). Every block starts on 1024 bytes (8 rows), which the XOR pattern assumes.
template <int ROWS>
__device__ __forceinline__ uint32_t sw128_offset(int row, int col) {  // byte offset of element (row, col), col even
    return uint32_t((col / 64) * ROWS * 128 + row * 128 + ((((col % 64) / 8) ^ (row % 8)) * 16) + (col % 8) * 2);
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
// The barrier's next phase completes when `count` arrivals were made and `bytes` bytes of TMA data landed.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done != 0;
}
// Waits until the phase of parity `parity` has completed (a fresh barrier counts its phase "−1", parity 1, as
// completed: a producer's first wait on an empty slot passes at once). With ATTNLAB_HOPPER_HANG_TRAP (the ladder's
// builds), a wait that lasts over 4 s traps, so a broken pipeline fails its launch instead of hanging.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
#ifdef ATTNLAB_HOPPER_HANG_TRAP
    uint64_t t0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (uint32_t i = 1; !mbar_try_wait(bar, parity); ++i) {
        if ((i & 1023) == 0) {
            uint64_t t;
            asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
            if (t - t0 > 4000000000ull) __trap();  // the launch fails: "unspecified launch failure"
        }
    }
#else
    while (!mbar_try_wait(bar, parity)) {
    }
#endif
}
// mbarrier.init is a generic-proxy write; TMA (the async proxy) must see it.
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// Ordinary shared-memory writes (st.shared, cp.async) that wgmma or TMA reads next: each writing thread fences.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Named barriers (0 is __syncthreads): `count` threads, a multiple of 32, meet at `id`; arrive does not wait.
__device__ __forceinline__ void bar_sync(int id, int count) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int count) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// ---- TMA: one instruction copies a box of a tensor between global and shared memory ---------------------------
// A box of the 3-D tensor [BH][rows][D] (coordinates innermost first: column, row, batch·head) into shared memory;
// the mbarrier's transaction count drops by the box's bytes when it has landed. Rows past the tensor's end are
// filled with zeros (and still counted).
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int col, int row, int bh) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(
            dst),
        "l"(map), "r"(bar), "r"(col), "r"(row), "r"(bh)
        : "memory");
}
// A box from shared memory to global memory; rows past the tensor's end are not written.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, uint32_t src, int col, int row, int bh) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(map), "r"(src),
                 "r"(col), "r"(row), "r"(bh)
                 : "memory");
}
__device__ __forceinline__ void tma_store_commit_and_wait() {
    asm volatile("cp.async.bulk.commit_group;\ncp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

// ---- cp.async (rung 6's loads) -------------------------------------------------------------------------------
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, bool valid) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// ---- register budgets (warp specialisation) ---------------------------------------------------------------------
template <int R>
__device__ __forceinline__ void regs_raise() {
#if ATTNLAB_SM90A_DEVICE
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}
template <int R>
__device__ __forceinline__ void regs_lower() {
#if ATTNLAB_SM90A_DEVICE
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
#endif
}

// ---- wgmma ----------------------------------------------------------------------------------------------------
// A shared-memory matrix descriptor (64 bits): start address, leading and stride byte offsets (all >> 4), and the
// layout type in bits 62–63 (1 = 128-byte swizzle). For a K-major operand (Q, K: the reduction dimension is the
// contiguous one) the tile is rows of 128 bytes, SBO = 1024 (from one 8-row group to the next), LBO unused (1);
// the k-th 16-element step within a 64-element column block is the start address + 32·k bytes (the hardware
// applies the XOR to the address it forms, so the 1024-byte-aligned block keeps its pattern). For an MN-major
// operand (V: the output dimension is contiguous) SBO = 1024 (8 keys) and LBO = the distance between 64-column
// blocks; the k-th 16-key step is the start address + 16·128·k.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
    return uint64_t((addr & 0x3FFFF) >> 4) | uint64_t(lbo >> 4) << 16 | uint64_t(sbo >> 4) << 32 | uint64_t(1) << 62;
}
// Orders this warpgroup's register accesses before the wgmma that follow (needed whenever an accumulator or an A
// fragment was written by other instructions); commit closes a group of issued wgmma; wait<N> returns when at most
// N groups are still in flight.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// The compiler sees a wgmma's accumulators as written when it is issued; the tensor cores write them until the
// wait. This empty asm, after the wait, pins every register so that no use moves above it.
template <int N>
__device__ __forceinline__ void pin(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
// Stores of a wgmma's A fragments that never run (`never`: false at run time, unknown to the compiler): a use of the
// registers, which the tensor cores read until the wait, and a branch the wait does not move above (persistent_bf16.cuh,
// point 7). Empty asm (pin) does not do this: it leaves no instruction for ptxas to keep.
template <int N>
__device__ __forceinline__ void hold_fragments(const uint32_t (&a)[N][4], bool never) {
    if (never) {
#pragma unroll
        for (int i = 0; i < N; ++i)
            asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(16 * i), "r"(a[i][0]), "r"(a[i][1]), "r"(a[i][2]),
                         "r"(a[i][3])
                         : "memory");
    }
}

// m64nNk16, bf16 × bf16 → fp32, one warpgroup. Accumulator fragment (N/2 floats a thread), as mma.sync's m16n8 C
// fragment once per warp: warp w of the warpgroup owns rows 16w … 16w+15; lane (g = lane/4, t = lane%4) holds
// d[4i + 2h + e] = row 16w + g + 8h, column 8i + 2t + e. A fragment from registers (4 × bf16x2): the same
// layout as mma.sync's m16n8k16 A, so the C fragment of two n8 blocks (16 columns of S) is an A fragment of P.
//   ss_init: D = A·B, ss: D += A·B, A and B K-major in shared memory (A = Q rows, B = K rows: S = Q·Kᵀ)
//   rs:      D += A·B, A in registers, B MN-major in shared memory (B = V [keys][D], transposed by the hardware)
template <int N>
struct Wgmma {
    static __device__ void ss_init(float (&d)[N / 2], uint64_t a, uint64_t b);
    static __device__ void ss(float (&d)[N / 2], uint64_t a, uint64_t b);
    static __device__ void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b);
    // rs_k_init / rs_k: A in registers, B K-major (S = Q·Kᵀ with Q's fragments held in registers)
    static __device__ void rs_k_init(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b);
    static __device__ void rs_k(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b);
};
#if ATTNLAB_SM90A_DEVICE
// (generated: the operand lists of N/2 accumulators are written out in full)
template <>
__device__ __forceinline__ void Wgmma<64>::ss_init(float (&d)[32], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
          "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
          "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
          "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31])
        : "l"(a), "l"(b), "n"(0));
}
template <>
__device__ __forceinline__ void Wgmma<64>::ss(float (&d)[32], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31}, "
        "%32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "n"(1));
}
template <>
__device__ __forceinline__ void Wgmma<64>::rs(float (&d)[32], const uint32_t (&a)[4], uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31}, "
        "{%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(1));
}
template <>
__device__ __forceinline__ void Wgmma<128>::ss_init(float (&d)[64], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39,"
        "%40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55,"
        "%56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
          "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
          "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
          "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
          "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39]),
          "=f"(d[40]), "=f"(d[41]), "=f"(d[42]), "=f"(d[43]), "=f"(d[44]), "=f"(d[45]), "=f"(d[46]), "=f"(d[47]),
          "=f"(d[48]), "=f"(d[49]), "=f"(d[50]), "=f"(d[51]), "=f"(d[52]), "=f"(d[53]), "=f"(d[54]), "=f"(d[55]),
          "=f"(d[56]), "=f"(d[57]), "=f"(d[58]), "=f"(d[59]), "=f"(d[60]), "=f"(d[61]), "=f"(d[62]), "=f"(d[63])
        : "l"(a), "l"(b), "n"(0));
}
template <>
__device__ __forceinline__ void Wgmma<128>::ss(float (&d)[64], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39,"
        "%40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55,"
        "%56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "n"(1));
}
template <>
__device__ __forceinline__ void Wgmma<128>::rs(float (&d)[64], const uint32_t (&a)[4], uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39,"
        "%40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55,"
        "%56, %57, %58, %59, %60, %61, %62, %63}, "
        "{%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(1));
}
template <>
__device__ __forceinline__ void Wgmma<80>::ss_init(float (&d)[40], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39}, "
        "%40, %41, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
          "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
          "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
          "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
          "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39])
        : "l"(a), "l"(b), "n"(0));
}
// m64n80k16, D += A·B where `accumulate` is nonzero (else D = A·B); TRANS_A, TRANS_B: 1 where that operand is MN-major
// in shared memory (Wgmma<80>::ss: both K-major; 4d's transposed dQ: A = Kᵀ MN-major, B = dS K-major).
template <int TRANS_A, int TRANS_B>
__device__ __forceinline__ void wgmma_m64n80(float (&d)[40], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %42, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n80k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39}, "
        "%40, %41, p, 1, 1, %43, %44;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39])
        : "l"(a), "l"(b), "r"(accumulate), "n"(TRANS_A), "n"(TRANS_B));
}
template <>
__device__ __forceinline__ void Wgmma<80>::ss(float (&d)[40], uint64_t a, uint64_t b) { wgmma_m64n80<0, 0>(d, a, b, 1); }
template <>
__device__ __forceinline__ void Wgmma<176>::ss_init(float (&d)[88], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39,"
        "%40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55,"
        "%56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71,"
        "%72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87}, "
        "%88, %89, p, 1, 1, 0, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
          "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
          "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
          "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
          "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39]),
          "=f"(d[40]), "=f"(d[41]), "=f"(d[42]), "=f"(d[43]), "=f"(d[44]), "=f"(d[45]), "=f"(d[46]), "=f"(d[47]),
          "=f"(d[48]), "=f"(d[49]), "=f"(d[50]), "=f"(d[51]), "=f"(d[52]), "=f"(d[53]), "=f"(d[54]), "=f"(d[55]),
          "=f"(d[56]), "=f"(d[57]), "=f"(d[58]), "=f"(d[59]), "=f"(d[60]), "=f"(d[61]), "=f"(d[62]), "=f"(d[63]),
          "=f"(d[64]), "=f"(d[65]), "=f"(d[66]), "=f"(d[67]), "=f"(d[68]), "=f"(d[69]), "=f"(d[70]), "=f"(d[71]),
          "=f"(d[72]), "=f"(d[73]), "=f"(d[74]), "=f"(d[75]), "=f"(d[76]), "=f"(d[77]), "=f"(d[78]), "=f"(d[79]),
          "=f"(d[80]), "=f"(d[81]), "=f"(d[82]), "=f"(d[83]), "=f"(d[84]), "=f"(d[85]), "=f"(d[86]), "=f"(d[87])
        : "l"(a), "l"(b), "n"(0));
}
template <>
__device__ __forceinline__ void Wgmma<176>::ss(float (&d)[88], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %90, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n176k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39,"
        "%40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55,"
        "%56, %57, %58, %59, %60, %61, %62, %63,"
        "%64, %65, %66, %67, %68, %69, %70, %71,"
        "%72, %73, %74, %75, %76, %77, %78, %79,"
        "%80, %81, %82, %83, %84, %85, %86, %87}, "
        "%88, %89, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87])
        : "l"(a), "l"(b), "n"(1));
}
template <>
__device__ __forceinline__ void Wgmma<128>::rs_k_init(float (&d)[64], const uint32_t (&a)[4], uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39,"
        "%40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55,"
        "%56, %57, %58, %59, %60, %61, %62, %63}, "
        "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
          "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
          "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
          "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31]),
          "=f"(d[32]), "=f"(d[33]), "=f"(d[34]), "=f"(d[35]), "=f"(d[36]), "=f"(d[37]), "=f"(d[38]), "=f"(d[39]),
          "=f"(d[40]), "=f"(d[41]), "=f"(d[42]), "=f"(d[43]), "=f"(d[44]), "=f"(d[45]), "=f"(d[46]), "=f"(d[47]),
          "=f"(d[48]), "=f"(d[49]), "=f"(d[50]), "=f"(d[51]), "=f"(d[52]), "=f"(d[53]), "=f"(d[54]), "=f"(d[55]),
          "=f"(d[56]), "=f"(d[57]), "=f"(d[58]), "=f"(d[59]), "=f"(d[60]), "=f"(d[61]), "=f"(d[62]), "=f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(0));
}
template <>
__device__ __forceinline__ void Wgmma<128>::rs_k(float (&d)[64], const uint32_t (&a)[4], uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7,"
        "%8, %9, %10, %11, %12, %13, %14, %15,"
        "%16, %17, %18, %19, %20, %21, %22, %23,"
        "%24, %25, %26, %27, %28, %29, %30, %31,"
        "%32, %33, %34, %35, %36, %37, %38, %39,"
        "%40, %41, %42, %43, %44, %45, %46, %47,"
        "%48, %49, %50, %51, %52, %53, %54, %55,"
        "%56, %57, %58, %59, %60, %61, %62, %63}, "
        "{%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "n"(1));
}
#else  // not sm_90a: the kernels that call these compile to a trap (the host never launches them there)
template <int N>
__device__ void Wgmma<N>::ss_init(float (&)[N / 2], uint64_t, uint64_t) { __trap(); }
template <int N>
__device__ void Wgmma<N>::ss(float (&)[N / 2], uint64_t, uint64_t) { __trap(); }
template <int N>
__device__ void Wgmma<N>::rs(float (&)[N / 2], const uint32_t (&)[4], uint64_t) { __trap(); }
template <int N>
__device__ void Wgmma<N>::rs_k_init(float (&)[N / 2], const uint32_t (&)[4], uint64_t) { __trap(); }
template <int N>
__device__ void Wgmma<N>::rs_k(float (&)[N / 2], const uint32_t (&)[4], uint64_t) { __trap(); }
#endif

// S = Q·Kᵀ for one warpgroup: 64 query rows × BC keys, D/16 steps of k16. q_tile and k_tile are the shared-memory
// addresses of this warpgroup's 64 rows of Q (a tile of Q_ROWS rows) and of the BC-key K tile.
template <int D, int BC, int Q_ROWS>
__device__ __forceinline__ void gemm_qk(float (&s)[BC / 2], uint32_t q_tile, uint32_t k_tile) {
    const uint64_t qd = sw128_desc(q_tile, 16, 1024), kd = sw128_desc(k_tile, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        // k-step kk: column block kk/4, bytes 32·(kk%4) into its rows (the start address field counts 16 bytes)
        const uint64_t a = qd + ((kk / 4) * Q_ROWS * 128 + (kk % 4) * 32) / 16;
        const uint64_t b = kd + ((kk / 4) * BC * 128 + (kk % 4) * 32) / 16;
        if (kk == 0)
            Wgmma<BC>::ss_init(s, a, b);
        else
            Wgmma<BC>::ss(s, a, b);
    }
}
// S = Q·Kᵀ with this warpgroup's Q as A fragments in registers (q_frag, from load_q_fragments): only K is read from
// shared memory by the tensor cores (4 KB per k-step instead of 6).
template <int D, int BC>
__device__ __forceinline__ void gemm_qk_rs(float (&s)[BC / 2], const uint32_t (&q_frag)[D / 16][4], uint32_t k_tile) {
    const uint64_t kd = sw128_desc(k_tile, 16, 1024);
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
        const uint64_t b = kd + ((kk / 4) * BC * 128 + (kk % 4) * 32) / 16;
        if (kk == 0)
            Wgmma<BC>::rs_k_init(s, q_frag[kk], b);
        else
            Wgmma<BC>::rs_k(s, q_frag[kk], b);
    }
}
// This warpgroup's 64 rows of a swizzled [Q_ROWS][D] Q tile (from row row0 of it) as wgmma A fragments, by ldmatrix:
// lanes 0–15 address rows 16w + lane of k-step kk's first 8 columns, lanes 16–31 its second 8; the four 8 × 8 matrices
// come back as the fragment's four registers (rows g, g + 8 × columns 2t, 8 + 2t).
template <int D, int Q_ROWS>
__device__ __forceinline__ void load_q_fragments(uint32_t (&q_frag)[D / 16][4], uint32_t q_tile, int row0) {
    const int lane = threadIdx.x % 32, row = row0 + 16 * ((threadIdx.x % 128) / 32) + lane % 16;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(q_frag[kk][0]), "=r"(q_frag[kk][1]), "=r"(q_frag[kk][2]), "=r"(q_frag[kk][3])
                     : "r"(q_tile + sw128_offset<Q_ROWS>(row, 16 * kk + 8 * (lane / 16))));
}
// O += P·V for one warpgroup: P (64 × BC, bf16 A fragments in registers) times the V tile [BC][D]: BC/16 steps.
template <int D, int BC>
__device__ __forceinline__ void gemm_pv(float (&o)[D / 2], const uint32_t (&p)[BC / 16][4], uint32_t v_tile) {
    const uint64_t vd = sw128_desc(v_tile, BC * 128u, 1024);
#pragma unroll
    for (int kb = 0; kb < BC / 16; ++kb) Wgmma<D>::rs(o, p[kb], vd + kb * 16 * 128 / 16);  // keys 16kb …
}

// ---- the online softmax on an accumulator fragment ----------------------------------------------------------
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}
// Scores of keys past Sk, or (causal) past row + offset, to −inf. row0: this thread's first row (g), c0: the tile's
// first key. The fragment's element 4i + 2h + e is row row0 + 8h, key c0 + 8i + 2t + e.
template <int BC>
__device__ __forceinline__ void mask_tile(float (&s)[BC / 2], int row0, int c0, int t, int Sk, bool causal, int offset) {
#pragma unroll
    for (int i = 0; i < BC / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int key = c0 + 8 * i + 2 * t + (e & 1), row = row0 + 8 * (e >> 1);
            if (key >= Sk || (causal && key > row + offset)) s[4 * i + e] = -INFINITY;
        }
}
// r[0] op … op r[N−1] as a tree (depth ⌈log2 N⌉ instead of a chain of N − 1 dependent steps); N is a template
// parameter so that every index is a constant and r stays in registers.
template <int N>
struct Tree {
    template <class Op>
    static __device__ __forceinline__ float reduce(float* r, Op op) {
#pragma unroll
        for (int i = 0; i < N / 2; ++i) r[i] = op(r[i], r[i + (N + 1) / 2]);
        return Tree<(N + 1) / 2>::reduce(r, op);
    }
};
template <>
struct Tree<1> {
    template <class Op>
    static __device__ __forceinline__ float reduce(float* r, Op) { return r[0]; }
};
// One tile of the online softmax for this thread's two rows (h = 0, 1): the rows' maxima (a tree over the
// thread's BC/4 values, then the quad's 4 lanes), m_new = max(m, max·scale), alpha = exp2(m − m_new), s ← exp2(s·scale
// − m_new) in place, l ← alpha·l + Σ (this thread's share; the quad sums l at the end). A row with nothing visible
// yet keeps m = −inf and uses 0 as its max (its p are all 0, its alpha 0).
template <int BC>
__device__ __forceinline__ void online_softmax(float (&s)[BC / 2], float (&m)[2], float (&l)[2], float (&alpha)[2],
                                               float scale_log2) {
    constexpr int NI = BC / 8;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float r[NI];
#pragma unroll
        for (int i = 0; i < NI; ++i) r[i] = fmaxf(s[4 * i + 2 * h], s[4 * i + 2 * h + 1]);
        const float mx0 = Tree<NI>::reduce(r, [](float a, float b) { return fmaxf(a, b); });
        float mx = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_new = fmaxf(m[h], mx * scale_log2);
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        alpha[h] = ex2(m[h] - m_use);
        m[h] = m_new;
#pragma unroll
        for (int i = 0; i < NI; ++i) {
            s[4 * i + 2 * h] = ex2(fmaf(s[4 * i + 2 * h], scale_log2, -m_use));
            s[4 * i + 2 * h + 1] = ex2(fmaf(s[4 * i + 2 * h + 1], scale_log2, -m_use));
            r[i] = s[4 * i + 2 * h] + s[4 * i + 2 * h + 1];
        }
        l[h] = l[h] * alpha[h] + Tree<NI>::reduce(r, [](float a, float b) { return a + b; });
    }
}
__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x (low 16 bits) = lo
    return *reinterpret_cast<const uint32_t*>(&h);
}
// P (fp32, in the S fragment) → bf16 A fragments: keys 16kb … 16kb+15 are n8 blocks 2kb and 2kb+1.
template <int BC>
__device__ __forceinline__ void to_a_fragments(const float (&s)[BC / 2], uint32_t (&p)[BC / 16][4]) {
#pragma unroll
    for (int kb = 0; kb < BC / 16; ++kb) {
        p[kb][0] = pack_bf16(s[8 * kb + 0], s[8 * kb + 1]);
        p[kb][1] = pack_bf16(s[8 * kb + 2], s[8 * kb + 3]);
        p[kb][2] = pack_bf16(s[8 * kb + 4], s[8 * kb + 5]);
        p[kb][3] = pack_bf16(s[8 * kb + 6], s[8 * kb + 7]);
    }
}
template <int D>
__device__ __forceinline__ void rescale(float (&o)[D / 2], const float (&alpha)[2]) {
#pragma unroll
    for (int i = 0; i < D / 8; ++i) o[4 * i] *= alpha[0], o[4 * i + 1] *= alpha[0], o[4 * i + 2] *= alpha[1], o[4 * i + 3] *= alpha[1];
}
// An accumulator fragment's rows (local rows row_local + 8h, each × scale[h]) as bf16 into a swizzled [ROWS][D] tile.
template <int D, int ROWS>
__device__ __forceinline__ void store_fragment_bf16(uint32_t tile, const float (&acc)[D / 2], const float (&scale)[2], int row_local,
                                                    int t) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = row_local + 8 * h;
#pragma unroll
        for (int i = 0; i < D / 8; ++i) {
            const uint32_t v = pack_bf16(acc[4 * i + 2 * h] * scale[h], acc[4 * i + 2 * h + 1] * scale[h]);
            asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(tile + sw128_offset<ROWS>(r, 8 * i + 2 * t)), "r"(v) : "memory");
        }
    }
}
// O / l as bf16 into this warpgroup's 64 rows (local rows row_local, row_local + 8) of a swizzled [ROWS][D] tile; a
// row that saw no key (l = 0) gets zeros.
template <int D, int ROWS>
__device__ __forceinline__ void store_o_tile(uint32_t tile, const float (&o)[D / 2], const float (&l)[2], int row_local, int t) {
    float inv[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float sum = l[h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        inv[h] = sum > 0.f ? 1.f / sum : 0.f;
    }
    store_fragment_bf16<D, ROWS>(tile, o, inv, row_local, t);
}

// Rows row and row + 8 of a consumer thread's fragments: each row's log-sum-exp (m and l as online_softmax keeps them,
// l summed over the quad's 4 lanes; +∞ for a row that saw no key) into lse[row], by the quad's first lane.
__device__ __forceinline__ void store_lse(float* lse, const float (&m)[2], const float (&l)[2], int row, int Sq, int t) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        float sum = l[h];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        if (t == 0 && row + 8 * h < Sq) lse[row + 8 * h] = bf16_detail::row_lse(m[h], sum);
    }
}

// ---- host ------------------------------------------------------------------------------------------------------
// cuTensorMapEncodeTiled is a driver function; the runtime hands out its address (no -lcuda: the binaries link
// libcudart only, as every other program of the course does).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
        void* f = nullptr;
        cudaDriverEntryPointQueryResult found{};
        CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found));
        if (found != cudaDriverEntryPointSuccess || f == nullptr)
            throw std::runtime_error("cuTensorMapEncodeTiled: the CUDA driver does not provide it (needs CUDA 12.0 or newer)");
        return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
    }();
    return fn;
}
// The 3-D view [BH][rows][D] of a bf16 tensor, read and written in boxes of box_rows × 64 columns, 128-byte swizzled.
inline CUtensorMap tensor_map(const __nv_bfloat16* base, int BH, int rows, int D, int box_rows) {
    CUtensorMap map;
    const cuuint64_t dims[3] = {cuuint64_t(D), cuuint64_t(rows), cuuint64_t(BH)};
    const cuuint64_t strides[2] = {cuuint64_t(D) * 2, cuuint64_t(rows) * D * 2};  // bytes, of dimensions 1 and 2
    const cuuint32_t box[3] = {64, cuuint32_t(box_rows), 1};
    const cuuint32_t step[3] = {1, 1, 1};
    const CUresult r = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<__nv_bfloat16*>(base), dims,
                                            strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ") for a [" +
                                 std::to_string(BH) + "][" + std::to_string(rows) + "][" + std::to_string(D) + "] tensor");
    return map;
}
inline Params make_params(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int BH,
                          int Sq, int Sk, int D, bool causal, int q_box_rows, int kv_box_rows) {
    Params p;
    p.tq = tensor_map(q, BH, Sq, D, q_box_rows);
    p.tk = tensor_map(k, BH, Sk, D, kv_box_rows);
    p.tv = tensor_map(v, BH, Sk, D, kv_box_rows);
    p.to = tensor_map(o, BH, Sq, D, 64);
    p.q = q, p.k = k, p.v = v, p.o = o;
    p.Sq = Sq, p.Sk = Sk, p.causal = causal;
    p.scale_log2 = float(1.4426950408889634 / std::sqrt(double(D)));
    return p;
}
// True when this GPU runs the sm_90a kernels of this build: compute capability 9.0 exactly (sm_90a code runs on
// nothing else) and the file compiled with the sm_90a target (ATTNLAB_SM90A, set by the Makefile beside the -gencode).
// Asked once a process (attn::cached_device_attribute): 4b's and 4d's entry points ask it on every call.
inline bool device_is_sm90a() {
#ifdef ATTNLAB_SM90A
    return attn::cached_device_attribute<cudaDevAttrComputeCapabilityMajor>() == 9 &&
           attn::cached_device_attribute<cudaDevAttrComputeCapabilityMinor>() == 0;
#else
    return false;
#endif
}
// TMA needs 16-byte-aligned base addresses (cudaMalloc gives 256): whether every pointer given is.
template <class... T>
inline bool tma_aligned(const T*... p) {
    return ((reinterpret_cast<uintptr_t>(p) | ... | uintptr_t(0)) & 15) == 0;
}

}  // namespace task4::hopper
