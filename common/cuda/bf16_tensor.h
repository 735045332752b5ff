// bf16_tensor.h — bf16 tensors on the trusted side (Task 4's bf16 parts, 4b and 4d): host tensors rounded to
// bf16, device buffers of bf16 that travel to the runner as float words (two bf16 a word), and the whole-tensor
// relative L2 check that element-wise bounds cannot replace.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <string>

#include "common/cases.h"
#include "common/cuda/device.h"
#include "common/tensor.h"

namespace attn {

uint16_t bf16_bits(float x);  // round to nearest even (finite inputs)
float bf16_value(uint16_t bits);
void round_to_bf16(Tensor& t);

// A bf16 tensor on the device: n elements in ceil(n/2) float words (the runner's buffers are floats).
struct Bf16Buffer {
    size_t n;
    DeviceBuffer<float> words;
    explicit Bf16Buffer(size_t count) : n(count), words((count + 1) / 2) {}
    __nv_bfloat16* get() const { return reinterpret_cast<__nv_bfloat16*>(words.get()); }
    void upload(const Tensor& t);  // values already bf16-exact
    void poison();                 // every element 0xFFFF, a bf16 NaN: an unwritten element fails
    Tensor download(const Shape& shape) const;
};

// The device copy still holds `original` (a kernel that writes its inputs fails).
bool bf16_input_unchanged(CaseResult& r, const std::string& name, const Tensor& original, const Bf16Buffer& d);

// ‖got − want‖ / ‖want‖ (‖got − want‖ where want is all zeros), summed in double.
double relative_l2_error(const Tensor& got, const Tensor& want);

// relative_l2_error within `bound`, recorded as the case's metric
// `metric`; else the case fails saying so, with `hint` (what usually causes it).
bool relative_l2_within(CaseResult& r, const std::string& what, const Tensor& got, const Tensor& want, double bound,
                        const std::string& hint, const std::string& metric = "relative L2 error");

}  // namespace attn
