#include <cstdio>
#include <cuda_runtime.h>
int main() { int clk = 0, bus = 0, sms = 0; cudaDeviceGetAttribute(&clk, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, 0); cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  printf("memory clock %d kHz, bus %d bits, %d SMs: %.1f GB/s, %.1f GB/s a SM\n", clk, bus, sms, 2e3 * clk * (bus / 8.0) / 1e9, 2e3 * clk * (bus / 8.0) / sms / 1e9); }
