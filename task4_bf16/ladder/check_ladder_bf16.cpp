// check_ladder_bf16.cpp — the bf16 ladder's rungs at ragged shapes (course staff; not in the student kit): S = 1, 127,
// 129, 1000, 4096, Sq ≠ Sk both ways (causal with Sq > Sk leaves rows that see no key: they must be exactly 0),
// head_dim 64 and 128, causal and not. Each shape gets fresh inputs (fill_normal from a seed printed on the first
// line; ATTNLAB_CHECK_SEED sets it), each output is poisoned with NaN first, checked against fp32 cuBLAS attention
// on the same bf16 inputs by the bonus's tolerance (|diff| ≤ 4e-3 + 1.6e-2·|want| everywhere, relative L2 ≤ 4e-3),
// then computed again over a different poison and compared bit for bit (a race shows as a difference).
//   make check-ladder-task4-bf16 [ARGS="9 9a"]     (course repository, a GPU; no argument: every rung)
// "selftest" (wgmma_selftest.cu: the two GEMMs alone, run first on a Hopper GPU). Rungs by name: 4 (the mma.sync reference kernel), 6, 7, 8, 9, 9a (no intra-warpgroup overlap), 9b (key tiles of
// 176), 9c (one more stage), 9d (+ Q in registers), 10, 10b (Q in registers), 10c (three consumers at D = 64), ref (the public entry point). One process per rung is the safe way to run them on a GPU (a hung rung is
// then killed by `timeout` without hiding the others): tools/gpu/bf16_ladder/device_run_hopper.sh does that.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/cuda/attention_oracle.h"
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/cuda_check.h"
#include "common/cuda/device.h"
#include "common/cuda/gpu_compare.h"
#include "common/cuda/bf16_convert.h"
#include "task4_bf16/ladder/ladder_bf16.h"
#include "task4_bf16/task4_bf16.h"

using namespace attn;
using task4::bf16_convert::from_bf16;
using task4::bf16_convert::to_bf16;

namespace {

using Forward = void (*)(const __nv_bfloat16*, const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
                         int, int, bool);
struct Rung {
    const char* name;
    const char* what;
    Forward fn;
    bool hopper;
};

void rung4(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, int B, int H, int Sq,
           int Sk, int D, bool causal) {
    (D == 64 ? task4::bf16_detail::launch_fa2<64, 4, 2, 64, true, false>
             : task4::bf16_detail::launch_fa2<128, 4, 2, 64, false, false>)(q, k, v, o, B, H, Sq, Sk, causal, nullptr);
}

const std::vector<Rung>& rungs() {
    using namespace task4::ladder_bf16;
    static const std::vector<Rung> r = {
        {"4", "mma.sync, FA2's warp layout", rung4, false},
        {"6", "wgmma from shared-memory descriptors", wgmma_forward, true},
        {"7", "+ TMA and mbarriers", tma_forward, true},
        {"8", "+ producer warpgroup, setmaxnreg", warp_specialized_forward, true},
        {"9", "+ ping-pong, next QK before softmax", pingpong_forward, true},
        {"9a", "ping-pong alone (no intra-warpgroup overlap)", pingpong_no_overlap_forward, true},
        {"9b", "rung 9 with key tiles of 176", pingpong_bc176_forward, true},
        {"9c", "rung 9 with one more K/V stage", pingpong_stages_forward, true},
        {"9d", "rung 9c with Q's fragments in registers", pingpong_qreg_forward, true},
        {"10", "+ persistent blocks over a tile list", persistent_forward, true},
        {"10b", "rung 10 with Q's fragments in registers", persistent_qreg_forward, true},
        {"10c", "three consumer warpgroups at D = 64 (192 rows)", persistent_three_forward, true},
        {"ref", "flash_attention_forward_bf16 (the public entry point)", task4::flash_attention_forward_bf16, false},
    };
    return r;
}

struct Shape {
    int B, H, Sq, Sk, D;
    bool causal;
    std::string name() const {
        return fmt::format("B={} H={} Sq={} Sk={} D={}{}", B, H, Sq, Sk, D, causal ? " causal" : "");
    }
};

std::vector<Shape> shapes() {
    std::vector<Shape> s;
    for (int D : {64, 128})
        for (bool causal : {false, true})
            for (auto [B, H, Sq, Sk] : std::vector<std::array<int, 4>>{{1, 2, 1, 1},
                                                                        {2, 3, 127, 127},
                                                                        {2, 3, 129, 129},
                                                                        {1, 2, 256, 256},
                                                                        {1, 4, 1000, 1000},
                                                                        {2, 2, 100, 300},
                                                                        {2, 2, 300, 100},
                                                                        {1, 2, 77, 200},
                                                                        {1, 2, 1, 300},
                                                                        {1, 2, 300, 1},
                                                                        {1, 1, 2048, 129},
                                                                        {1, 2, 4096, 4096}})
                s.push_back({B, H, Sq, Sk, D, causal});
    return s;
}

constexpr double kAtol = 4e-3, kRtol = 1.6e-2, kRelL2 = 4e-3;

// Returns true when the rung passes at this shape; prints one line.
bool check(const Rung& r, const Shape& s, uint64_t seed, CublasGemm& gemm) {
    const int BH = s.B * s.H;
    const size_t nq = size_t(BH) * s.Sq * s.D, nk = size_t(BH) * s.Sk * s.D;
    DeviceBuffer<float> f(std::max(nq, nk)), qf(nq), kf(nk), vf(nk), want(nq), got(nq), scores(size_t(BH) * s.Sq * s.Sk);
    DeviceBuffer<__nv_bfloat16> q(nq), k(nk), v(nk), o(nq);
    fill_normal(f.get(), nq, seed + 1), to_bf16(f.get(), q.get(), qf.get(), nq);
    fill_normal(f.get(), nk, seed + 2), to_bf16(f.get(), k.get(), kf.get(), nk);
    fill_normal(f.get(), nk, seed + 3), to_bf16(f.get(), v.get(), vf.get(), nk);
    attention_oracle(gemm, qf.get(), kf.get(), vf.get(), want.get(), BH, s.Sq, s.Sk, s.D, s.causal, scores.get());

    std::vector<uint16_t> first(nq), second(nq);
    for (int pass = 0; pass < 2; ++pass) {
        CUDA_CHECK(cudaMemset(o.get(), pass == 0 ? 0xff : 0x7f, nq * 2));  // NaN, then a large finite value
        r.fn(q.get(), k.get(), v.get(), o.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.causal);
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy((pass == 0 ? first : second).data(), o.get(), nq * 2, cudaMemcpyDeviceToHost));
    }
    from_bf16(o.get(), got.get(), nq);
    const GpuDiff d = gpu_compare(got.get(), want.get(), nq, kAtol, kRtol);
    const std::vector<float> g = got.download(), w = want.download();
    double e2 = 0, w2 = 0;
    for (size_t i = 0; i < nq; ++i) e2 += double(g[i] - w[i]) * (g[i] - w[i]), w2 += double(w[i]) * w[i];
    const double rel = w2 > 0 ? std::sqrt(e2 / w2) : std::sqrt(e2);
    // rows that see no key (causal, i + Sk − Sq < 0): exactly zero
    size_t empty_rows = 0, empty_bad = 0;
    if (s.causal)
        for (int bh = 0; bh < BH; ++bh)
            for (int i = 0; i < s.Sq && i + s.Sk - s.Sq < 0; ++i, ++empty_rows)
                for (int c = 0; c < s.D; ++c) empty_bad += second[(size_t(bh) * s.Sq + i) * s.D + c] != 0;
    const bool same = std::memcmp(first.data(), second.data(), nq * 2) == 0;
    const bool ok = d.ok() && rel <= kRelL2 && empty_bad == 0 && same;
    fmt::print("  {:<3} {:<36} rel L2 {:.2e}  max|diff| {:.2e}  {}{}{}{}\n", r.name, s.name(), rel, d.max_abs,
               ok ? "ok" : "FAIL", d.ok() ? "" : fmt::format(" ({} outside the bound, {} NaN/Inf)", d.outside, d.nonfinite),
               empty_bad ? fmt::format(" ({} of {} empty rows' values not 0)", empty_bad, empty_rows * s.D) : "",
               same ? "" : " (two runs differ)");
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    std::string why;
    if (!has_cuda_device(&why)) {
        fmt::print("check_ladder_bf16 skipped: no CUDA device ({})\n", why);
        return 77;
    }
    const DeviceInfo dev = device_info();
    uint64_t seed = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
    if (const char* e = std::getenv("ATTNLAB_CHECK_SEED")) seed = std::strtoull(e, nullptr, 10);
    fmt::print("check_ladder_bf16 on {}: seed {} (ATTNLAB_CHECK_SEED={} repeats it)\n", dev.name, seed, seed);
    std::vector<std::string> want;
    for (int i = 1; i < argc; ++i) want.push_back(argv[i]);
    const bool hopper = task4::ladder_bf16::hopper_rungs_available();
    int failed = 0, passed = 0;
    CublasGemm gemm;
    try {
        if (hopper && (want.empty() || std::find(want.begin(), want.end(), "selftest") != want.end())) {
            const auto e = task4::ladder_bf16::wgmma_selftest();  // max |error| / max |value|
            const bool ok = e[0] < 1e-4 && e[1] < 1e-4 && e[2] < 1e-4 && e[3] > 1e-2;
            fmt::print("selftest (one warpgroup's wgmma against the CPU): S = Q·Kᵀ {:.2e}, with Q in registers {:.2e}, "
                       "O = P·V {:.2e}, O with V's offsets swapped {:.2e} (must be large): {}\n",
                       e[0], e[1], e[2], e[3], ok ? "ok" : "FAIL");
            (ok ? passed : failed)++;
        }
        for (const Rung& r : rungs()) {
            if (!want.empty() && std::find(want.begin(), want.end(), r.name) == want.end()) continue;
            fmt::print("rung {}: {}\n", r.name, r.what);
            if (r.hopper && !hopper) {
                fmt::print("  skipped: needs sm_90a on a compute capability 9.0 GPU\n");
                continue;
            }
            const std::vector<Shape> all = shapes();
            for (size_t i = 0; i < all.size(); ++i) (check(r, all[i], seed + 16 * i, gemm) ? passed : failed)++;
        }
    } catch (const std::exception& e) {
        fmt::print("ERROR: {}\n", e.what());
        return 1;
    }
    fmt::print("check_ladder_bf16: {} passed, {} failed\n", passed, failed);
    return failed ? 1 : 0;
}
