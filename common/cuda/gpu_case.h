// gpu_case.h — the steps of a GPU case: inputs up, outputs poisoned, results down, inputs checked.
#pragma once
#include <string>

#include "common/cases.h"
#include "common/cuda/device.h"
#include "common/tensor.h"

namespace attn {

DeviceBuffer<float> to_device(const Tensor& t);
Tensor to_host(const DeviceBuffer<float>& d, const Shape& shape);
// A poisoned (NaN) device output of this shape.
DeviceBuffer<float> poisoned_output(const Shape& shape);
// Waits for the default stream, where the interface says the work runs; a kernel fault surfaces
// here as a CudaError.
void sync_default_stream();
// Reads an output once the default stream is done, then again once the whole device is: if work
// left on another stream changed it in between, records that failure and returns false.
bool read_output(CaseResult& r, const DeviceBuffer<float>& d, const Shape& shape, Tensor& out);
// Copies host values into an existing device buffer (same size).
void upload(DeviceBuffer<float>& d, const Tensor& t);
// Records a failure and returns false if the device copy of an input no longer equals `original`.
bool device_input_unchanged(CaseResult& r, const std::string& name, const Tensor& original, const DeviceBuffer<float>& d);

}  // namespace attn
