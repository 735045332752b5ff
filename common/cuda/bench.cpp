// bench.cpp — see bench.h.
#include "common/cuda/bench.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/cuda/cublas_gemm.h"
#include "common/cuda/gpu_wait.h"
#include "common/cuda/read_stream.h"

namespace attn {

const char* overlap_timing_words() {
    return hide_host_behind_gpu_wait() ? "GPU time only (the call's host work queued behind a GPU wait)"
                                       : "host work past the flush counted (ATTNLAB_TIMING_HIDE_HOST=0)";
}

Bencher::Bencher() : flush_((std::max<size_t>(2 * device_info().l2_bytes, size_t(64) << 20) + 15) / 16 * 16) {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
}

Bencher::~Bencher() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
}

Timing Bencher::time(const std::function<void()>& fn, BenchOptions opt, const std::function<void()>& prepare,
                     const std::function<void()>& check) {
    for (int i = 0; i < opt.warmup; ++i) {
        if (prepare) prepare();
        fn();
        if (check) check();
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> ms;
    for (int i = 0; i < opt.reps; ++i) {
        if (prepare) prepare();
        if (opt.overlap_host) CUDA_CHECK(cudaDeviceSynchronize());  // whatever `prepare` left is done before the flush
        // The wait before the flush, not after it: the call then starts right behind the flush, as in the synchronised
        // timing (with a one-thread spin between them, calls of ~0.2 ms timed 2–3 % slower on an H100).
        if (opt.overlap_host && hide_host_behind_gpu_wait()) gpu_wait();  // fn's launches queue meanwhile
        if (opt.flush_l2) flush_l2_clean(flush_.get(), flush_.bytes());
        if (!opt.overlap_host) CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(start_));
        fn();
        if (!opt.overlap_host) CUDA_CHECK(cudaDeviceSynchronize());  // everything the call launched, on any stream, is done
        CUDA_CHECK(cudaEventRecord(stop_));
        CUDA_CHECK(cudaEventSynchronize(stop_));
        if (opt.overlap_host) CUDA_CHECK(cudaDeviceSynchronize());
        float t = 0;
        CUDA_CHECK(cudaEventElapsedTime(&t, start_, stop_));
        ms.push_back(t);
        if (check) check();
    }
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    return {n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]), ms.front(), int(n)};
}

Ceilings measure_ceilings(Bencher& b) {
    Ceilings c;
    {
        const size_t n = size_t(256) << 20;  // 1 GiB of floats
        DeviceBuffer<float> src(n), dst(n);
        CUDA_CHECK(cudaMemset(src.get(), 0x3c, src.bytes()));
        Timing t = b.time([&] { CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice)); },
                          {2, 10, false});
        c.copy_gbps = 2.0 * double(src.bytes()) / (t.median_ms * 1e6);
    }
    {
        const int n = 8192;
        DeviceBuffer<float> a(size_t(n) * n), bm(size_t(n) * n), out(size_t(n) * n);
        fill_uniform(a.get(), a.size(), 1, -1.f, 1.f);
        fill_uniform(bm.get(), bm.size(), 2, -1.f, 1.f);
        CublasGemm gemm;
        Timing t = b.time([&] { gemm.nn(a.get(), bm.get(), out.get(), 1, n, n, n); }, {2, 8, false});
        c.sgemm_tflops = 2.0 * double(n) * n * n / (t.median_ms * 1e9);
    }
    return c;
}

int run_benchmark(const char* program, FILE* out, const std::function<void(BenchContext&)>& body) {
    std::string why;
    if (!has_cuda_device(&why)) {
        fmt::print("skipped: no CUDA device ({})\n", why);
        return 77;
    }
    try {
        Bencher b;
        BenchContext ctx{device_info(), b, measure_ceilings(b)};
        fmt::print(out, "GPU: {} ({} SMs, {} MB L2)   ceilings measured now: copy {:.0f} GB/s, cuBLAS SGEMM {:.1f} TFLOP/s\n",
                   ctx.device.name, ctx.device.sms, ctx.device.l2_bytes >> 20, ctx.ceilings.copy_gbps,
                   ctx.ceilings.sgemm_tflops);
        body(ctx);
    } catch (const std::exception& e) {
        fmt::print(stderr, "{}: {}\n", program, e.what());
        return 1;
    }
    return 0;
}

std::string perf_line(const std::string& name, const Timing& t, double flops, double bytes, const Ceilings& c) {
    std::string s = fmt::format("{:<44} {:9.3f} ms (min {:.3f}, n={})", name, t.median_ms, t.min_ms, t.reps);
    if (flops > 0) {
        const double tf = flops / (t.median_ms * 1e9);
        s += fmt::format("  {:6.2f} TFLOP/s = {:3.0f}% of SGEMM", tf, 100 * tf / c.sgemm_tflops);
    }
    if (bytes > 0) {
        const double gbps = bytes / (t.median_ms * 1e6);
        s += fmt::format("  {:7.1f} GB/s = {:3.0f}% of copy", gbps, 100 * gbps / c.copy_gbps);
    }
    return s;
}

}  // namespace attn
