// gpu_probe.cu — which GPUs a process can reach, and whether it can compute on them: the check that a class-grading
// worker's sandbox, given one GPU's device node (ATTNLAB_GPU_NODE, tools/class/gpus.py), keeps its runners to that GPU
// even with CUDA_VISIBLE_DEVICES unset. Prints the device count, each device's name and PCI bus id, and a kernel's
// result on each. Build: nvcc -o build/gpu_probe tools/gpu/gpu_probe.cu (tools/gpu/pack_class.sh); run: class_gpus.sh probe.
#include <cuda_runtime.h>

#include <cstdio>

__global__ void add_one(int* x) { *x += 1; }

int main() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        std::printf("no device: %s\n", cudaGetErrorString(e));
        return 2;
    }
    std::printf("%d device(s)\n", n);
    int ok = 0;
    for (int d = 0; d < n; ++d) {
        cudaDeviceProp p{};
        cudaGetDeviceProperties(&p, d);
        char bus[32] = "?";
        cudaDeviceGetPCIBusId(bus, sizeof bus, d);
        int h = 41, *x = nullptr;
        cudaSetDevice(d);
        const bool ran = cudaMalloc(&x, sizeof h) == cudaSuccess && cudaMemcpy(x, &h, sizeof h, cudaMemcpyHostToDevice) == cudaSuccess &&
                         (add_one<<<1, 1>>>(x), cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost) == cudaSuccess) && h == 42;
        std::printf("device %d: %s, PCI %s, kernel %s\n", d, p.name, bus, ran ? "ran" : cudaGetErrorString(cudaGetLastError()));
        ok += ran;
        cudaFree(x);
    }
    return ok == n && n > 0 ? 0 : 1;
}
