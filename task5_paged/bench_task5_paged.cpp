// bench_task5_paged.cpp — Task 5's paged part (5b) on one GPU: GB/s of paged_decode_bf16 (then paged_decode_f32) at the shapes of
// docs/perf.md's decode table (32 query heads of 128 over 8 KV heads, one KV head (MQA) and 32 (MHA); batches of
// 1 to 256 sequences of 1k to 128k positions; a ragged batch of lengths 1 … 32k), each beside a device-to-device copy
// of the same bytes, timed the same way, and a kernel that only reads them (common/cuda/read_stream.h: a decode's own
// ceiling, below a copy's at a few hundred MB), once as one buffer and once as the layout's pages where they lie (scattered
// pages of 16 KB read slower). Bytes = the K and V positions the batch holds, read once. Each shape runs
// twice: pages of 64 positions handed out in shuffled order, and the same bytes laid out contiguously (an identity
// page table over pages of 256: the pool is then a plain [B, L, H_kv, D] cache), so the cost of paging shows.
// After the timed calls, query heads 0 and H_q − 1 of the first and the last sequence are checked against float64
// on the CPU with the tests' tolerance. Timing: events, L2 flushed, warm-up, median (common/cuda/bench.h), twice: the
// call's host work hidden behind a GPU wait, as tools/vs_torch/paged_decode.py times cuDNN, FA2 and FA4 (GB/s and the
// share of the copy come from this one), and with the device synchronised around the call, host work inside (a decode
// step's host time is time the GPU waits unless the server overlaps it). Every buffer of a shape comes from one KeptPool
// (common/cuda/device.h) that keeps what earlier shapes freed: pools mapped again from memory given back to the driver
// read up to 13 % slower, in every shape after a process's first (docs/perf.md, "5b's ragged batch: the benchmark's own
// cudaFree"); --cudamalloc (after any other option) allocates as before, to see it.
//   make bench-task5-paged [IMPL=reference] [ARGS="--quick"]    your kernel (or the model solution)
// --quick: the first two shapes; --shape N: the N-th alone (0 = the first), for a profiler; --f32: the float32 rows alone;
// --layouts: B = 1 and the ragged batch with pages of 64 and 256, each in order and shuffled; --sweep: B = 64 at MQA and at
// 8 KV heads, L = 1k … 32k (a call's fixed cost apart from its streaming rate). tools/vs_torch/paged_decode.py times cuDNN, FA2 and FA4 at the same shapes.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "common/compare.h"  // Tolerance
#include "common/cuda/bench.h"
#include "common/cuda/bf16_convert.h"
#include "common/cuda/cublas_gemm.h"  // fill_normal
#include "common/cuda/read_stream.h"
#include "task5_paged/task5_paged.h"

using namespace attn;

namespace {

FILE* out = stdout;

// The element type's tests' tolerance (cases_paged.cpp): bf16 pools, and float32 ones (Task 5's).
template <class T>
constexpr Tolerance kTolOf = std::is_same_v<T, float> ? Tolerance{2e-5, 1e-4} : Tolerance{4e-3, 1.6e-2};

struct BenchShape {
    std::string name;
    int H_q, H_kv;
    std::vector<int> lengths;
};

float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
float to_float(float x) { return x; }

// The largest |got − want| over tolerance, for two query heads of two sequences, from the pools on the host.
template <class T>
double check(const BenchShape& s, int D, int ps, int pps, const std::vector<int>& table, const DeviceBuffer<T>& q,
             const DeviceBuffer<T>& kp, const DeviceBuffer<T>& vp, const DeviceBuffer<T>& o) {
    const std::vector<T> hq = q.download(), hk = kp.download(), hv = vp.download(), ho = o.download();
    const int B = int(s.lengths.size()), g = s.H_q / s.H_kv;
    double worst = 0;
    for (int b : {0, B - 1})
        for (int h : {0, s.H_q - 1}) {
            const int L = s.lengths[b], kvh = h / g;
            std::vector<double> p(L), acc(D, 0.0);
            double mx = -INFINITY, sum = 0;
            auto row = [&](int pos) { return ((size_t(table[size_t(b) * pps + pos / ps]) * ps + pos % ps) * s.H_kv + kvh) * D; };
            for (int pos = 0; pos < L; ++pos) {
                double dot = 0;
                for (int d = 0; d < D; ++d) dot += double(to_float(hq[(size_t(b) * s.H_q + h) * D + d])) * to_float(hk[row(pos) + d]);
                p[pos] = dot / std::sqrt(double(D)), mx = std::max(mx, p[pos]);
            }
            for (int pos = 0; pos < L; ++pos) {
                const double w = std::exp(p[pos] - mx);
                sum += w;
                for (int d = 0; d < D; ++d) acc[d] += w * to_float(hv[row(pos) + d]);
            }
            for (int d = 0; d < D; ++d) {
                const double want = acc[d] / sum, got = to_float(ho[(size_t(b) * s.H_q + h) * D + d]);
                worst = std::max(worst, std::abs(got - want) / (kTolOf<T>.atol + kTolOf<T>.rtol * std::abs(want)));
            }
        }
    return worst;
}

// The layouts: contiguous (an identity table over pages of 256: a plain [B, L, H_kv, D] cache); pages of 64 shuffled
// over a pool of B × the longest sequence's pages; the same pages shuffled over a pool just as large as the batch
// needs (a ragged batch's pool is otherwise mostly pages no sequence uses). --layouts adds pages of 64 in order and
// pages of 256 shuffled: what the page size and what the order cost, apart.
struct Layout {
    std::string name;
    int page_size;
    bool shuffled, compact;
};
const Layout kContiguous{"contiguous", 256, false, false}, kPaged{"pages of 64", 64, true, false},
    kCompact{"compact pool", 64, true, true}, kInOrder64{"64, in order", 64, false, false}, kShuffled256{"256, shuffled", 256, true, false};

// Where a shape's buffers come from: the benchmark's KeptPool, or cudaMalloc (--cudamalloc) where it is null.
const KeptPool* kept_pool = nullptr;
template <class T>
DeviceBuffer<T> buffer(size_t n) {
    return kept_pool ? DeviceBuffer<T>(n, *kept_pool) : DeviceBuffer<T>(n);
}

template <class T>
void run_shape(Bencher& bench, const BenchShape& s, const Layout& layout) {
    const int D = 128, B = int(s.lengths.size()), ps = layout.page_size;
    int pps = 0, used = 0;
    for (int L : s.lengths) pps = std::max(pps, (L + ps - 1) / ps), used += (L + ps - 1) / ps;
    const int num_pages = layout.compact ? used : B * pps;
    const size_t pool = size_t(num_pages) * ps * s.H_kv * D, nq = size_t(B) * s.H_q * D;
    std::vector<int> table(size_t(B) * pps);
    std::iota(table.begin(), table.end(), 0);
    if (layout.shuffled) std::shuffle(table.begin(), table.end(), std::mt19937_64(7));
    if (layout.compact) {  // each sequence's pages in turn from one shuffled list of the pool's pages
        std::vector<int> order(num_pages);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
        for (int b = 0, next = 0; b < B; ++b)
            for (int p = 0; p < pps; ++p) table[size_t(b) * pps + p] = p < (s.lengths[b] + ps - 1) / ps ? order[next++] : -1;
    }
    DeviceBuffer<T> kp = buffer<T>(pool), vp = buffer<T>(pool), q = buffer<T>(nq), o = buffer<T>(nq);
    for (auto [buf, n, seed] : {std::tuple{&kp, pool, 51}, std::tuple{&vp, pool, 52}, std::tuple{&q, nq, 53}}) {
        if constexpr (std::is_same_v<T, float>) {
            fill_normal(buf->get(), n, uint64_t(seed));
        } else {
            DeviceBuffer<float> f = buffer<float>(n);
            fill_normal(f.get(), n, uint64_t(seed)), task4::bf16_convert::to_bf16(f.get(), buf->get(), nullptr, n);
        }
    }
    double bytes = 0;
    for (int L : s.lengths) bytes += 2.0 * L * s.H_kv * D * sizeof(T);
    auto call = [&] {
        if constexpr (std::is_same_v<T, float>)
            task5::paged_decode_f32(q.get(), kp.get(), vp.get(), o.get(), table.data(), s.lengths.data(), B, s.H_q, s.H_kv, D, ps,
                                    num_pages, pps);
        else
            task5::paged_decode_bf16(q.get(), kp.get(), vp.get(), o.get(), table.data(), s.lengths.data(), B, s.H_q, s.H_kv, D, ps,
                                     num_pages, pps);
    };
    const BenchOptions overlapped{3, 20, true, true};
    const Timing t = bench.time(call, overlapped), t_sync = bench.time(call);
    CUDA_CHECK(cudaDeviceSynchronize());
    // The host's share: how long the call takes to return (checks, the plan, the table's copy, the launches), during
    // which the GPU may sit idle — it is inside the events' time.
    std::vector<double> host_us;
    for (int i = 0; i < 10; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        call();
        host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    std::sort(host_us.begin(), host_us.end());
    const double worst = check<T>(s, D, ps, pps, table, q, kp, vp, o);
    // A copy of the same bytes, timed the same way: read + written, as the ceilings count a copy.
    const size_t n_bytes = size_t(bytes);
    DeviceBuffer<char> from = buffer<char>(n_bytes), to = buffer<char>(n_bytes);
    const auto copy_call = [&] { CUDA_CHECK(cudaMemcpyAsync(to.get(), from.get(), n_bytes, cudaMemcpyDeviceToDevice, 0)); };
    const Timing tc = bench.time(copy_call, overlapped), tc_sync = bench.time(copy_call);
    const Timing tr = bench.time([&] { read_stream(from.get(), n_bytes); }, overlapped);
    // The same read over the pool's pages in use, where the table puts them: this layout's own ceiling.
    std::vector<int> in_use;
    for (int b = 0; b < B; ++b)
        for (int p = 0; p < (s.lengths[b] + ps - 1) / ps; ++p) in_use.push_back(table[size_t(b) * pps + p]);
    DeviceBuffer<int> pages = buffer<int>(in_use.size());
    CUDA_CHECK(cudaMemcpy(pages.get(), in_use.data(), in_use.size() * sizeof(int), cudaMemcpyHostToDevice));
    const size_t page_bytes = size_t(ps) * s.H_kv * D * sizeof(T);
    const Timing tp = bench.time([&] { read_pages(kp.get(), vp.get(), pages.get(), int(in_use.size()), page_bytes); }, overlapped);
    const double gbps = bytes / (t.median_ms * 1e6), copy = 2 * bytes / (tc.median_ms * 1e6), read = bytes / (tr.median_ms * 1e6);
    const double read_pages_gbps = 2.0 * page_bytes * in_use.size() / (tp.median_ms * 1e6);
    const double gbps_sync = bytes / (t_sync.median_ms * 1e6), copy_sync = 2 * bytes / (tc_sync.median_ms * 1e6);
    fmt::print(out, "{:<40} {:<12} {:8.3f} ms  {:7.1f} GB/s = {:5.1f}% of a copy of the same bytes ({:.0f} GB/s; a read-only "
                    "kernel: {:5.1f}%, of these pages: {:5.1f}%)  | host inside: {:.3f} ms = {:5.1f}% of a copy timed so  | host "
                    "{:.0f} us  worst error {:.2f} of the tolerance\n",
               s.name, layout.name, t.median_ms, gbps, 100 * gbps / copy, copy, 100 * read / copy, 100 * read_pages_gbps / copy, t_sync.median_ms,
               100 * gbps_sync / copy_sync, host_us[5], worst);
    std::fflush(out);
    if (!(worst <= 1.0)) throw std::runtime_error(s.name + ": the output is outside the tolerance (" + fmt::format("{:.2f}", worst) + ")");
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool quick = mode == "--quick", f32_only = mode == "--f32", layouts = mode == "--layouts", sweep = mode == "--sweep";
    const int only = argc > 2 && std::string(argv[1]) == "--shape" ? std::atoi(argv[2]) : -1;  // one shape (profiling)
    const bool cudamalloc = std::string(argv[argc - 1]) == "--cudamalloc";
    return run_benchmark("bench_task5_paged", out, [&](BenchContext& ctx) {
        const KeptPool pool;
        if (!cudamalloc) kept_pool = &pool;
        fmt::print(out, "buffers: {}\n", cudamalloc ? "cudaMalloc and cudaFree, shape by shape (--cudamalloc)"
                                                     : "from one pool that keeps freed memory (KeptPool)");
        std::vector<int> ragged(32);  // lengths 1 … 32768, log-uniform, seeded
        std::mt19937_64 g(11);
        for (int& L : ragged) L = int(std::exp2(std::uniform_real_distribution<double>(0, 15)(g)));
        ragged.front() = 1, ragged.back() = 32768;
        const std::vector<BenchShape> shapes = {
            {"B=64 H_q=32 H_kv=8 L=4096", 32, 8, std::vector<int>(64, 4096)},
            {"B=8 H_q=32 H_kv=8 L=32768", 32, 8, std::vector<int>(8, 32768)},
            {"B=256 H_q=32 H_kv=8 L=1024", 32, 8, std::vector<int>(256, 1024)},
            {"B=1 H_q=32 H_kv=8 L=131072", 32, 8, std::vector<int>(1, 131072)},
            {"B=64 H_q=32 H_kv=1 L=4096 (MQA)", 32, 1, std::vector<int>(64, 4096)},
            {"B=64 H_q=32 H_kv=32 L=4096 (MHA)", 32, 32, std::vector<int>(64, 4096)},
            {"B=32 H_q=32 H_kv=8 L=1…32768 (ragged)", 32, 8, ragged},
        };
        fmt::print(out, "paged_decode_bf16, D = 128, bf16 K and V read once a call; first as torch's scripts time ({}), then "
                        "with host work inside the time (device synchronised around the call)\n", overlap_timing_words());
        if (sweep) {  // time against bytes: what a call costs whatever its size, and the rate at which it streams
            for (int H_kv : {1, 8})
                for (int L : {1024, 2048, 4096, 8192, 16384, 32768})
                    run_shape<__nv_bfloat16>(ctx.bencher, {fmt::format("B=64 H_q=32 H_kv={} L={}", H_kv, L), 32, H_kv,
                                                           std::vector<int>(64, L)}, kPaged);
            return;
        }
        if (layouts) {
            for (const BenchShape& s : {shapes[3], shapes[6]})
                for (const Layout& l : {kPaged, kInOrder64, kShuffled256, kContiguous}) run_shape<__nv_bfloat16>(ctx.bencher, s, l);
            return;
        }
        for (size_t i = 0; i < shapes.size() && (!quick || i < 2) && !f32_only; ++i)
            if (only < 0 || int(i) == only)
            for (const Layout& l : {kPaged, kCompact, kContiguous})
                if (!l.compact || shapes[i].lengths.front() != shapes[i].lengths.back())  // ragged only
                    run_shape<__nv_bfloat16>(ctx.bencher, shapes[i], l);
        fmt::print(out, "\npaged_decode_f32 (task5b.4: float32 pools, CUDA cores; not graded for speed), pages of 64 shuffled\n");
        for (size_t i = 0; i < shapes.size() && (!quick || i < 2); ++i)
            if (only < 0 || int(i) == only) run_shape<float>(ctx.bencher, shapes[i], kPaged);
    });
}
