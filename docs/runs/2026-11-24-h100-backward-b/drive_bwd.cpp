// drive_bwd.cpp — the reference backward on small ragged shapes, once each, for compute-sanitizer
// (kept with the logs: the program compute-sanitizer ran in device_run_{a,b}.sh, built against the reference's
// object: g++ … build/reference/task4/reference/flash_attention_backward.o and the harness's CUDA objects)
#include <cstdio>
#include <vector>
#include "common/cuda/cublas_gemm.h"
#include "common/cuda/device.h"
#include "task4/task4_backward.h"
using namespace attn;
int main() {
    struct S { int B, H, Sq, Sk, D; bool c; };
    for (S s : {S{1, 2, 200, 200, 128, true}, S{1, 1, 150, 70, 64, true}, S{2, 1, 65, 130, 96, false}, S{1, 1, 33, 33, 32, true}}) {
        size_t nq = size_t(s.B) * s.H * s.Sq * s.D, nk = size_t(s.B) * s.H * s.Sk * s.D, nl = size_t(s.B) * s.H * s.Sq;
        DeviceBuffer<float> q(nq), k(nk), v(nk), o(nq), g(nq), l(nl), dq(nq), dk(nk), dv(nk);
        fill_normal(q.get(), nq, 1), fill_normal(k.get(), nk, 2), fill_normal(v.get(), nk, 3), fill_normal(g.get(), nq, 4);
        task4::flash_attention_forward_lse(q.get(), k.get(), v.get(), o.get(), l.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.c);
        task4::flash_attention_backward(q.get(), k.get(), v.get(), o.get(), g.get(), l.get(), dq.get(), dk.get(), dv.get(), s.B, s.H, s.Sq, s.Sk, s.D, s.c);
        CUDA_CHECK(cudaDeviceSynchronize());
        std::printf("shape %d %d %d %d %d %d ok\n", s.B, s.H, s.Sq, s.Sk, s.D, int(s.c));
    }
}
