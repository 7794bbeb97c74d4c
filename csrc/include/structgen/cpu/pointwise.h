// The host side of generated pointwise kernels and of the hand-written kernels that share their
// pieces: tensors brought to the common dtype and device, the iteration geometry, numbers as
// kernels read them. The loops themselves are torch-free (structgen/cpu/rows.h).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include <structgen/cpu/rows.h>
#include <structgen/parallel.h>

namespace structgen::cpu {

// `inputs` already have the common dtype (or their own fixed one) and broadcast to out's shape.
Geometry make_geometry(const at::Tensor& out, c10::ArrayRef<at::Tensor> inputs);

// An input as a kernel reads it: in `dtype` (a copy only when it differs, as TensorIterator does
// on the CPU) and on `device` (a 0-dim CPU tensor given to a CUDA op is moved there).
at::Tensor operand(const at::Tensor& t, at::ScalarType dtype, at::Device device);

// A Python number as the 0-dim CPU tensor torch wraps it in (double, int64, complex<double> or
// bool, flagged a wrapped number): how a Scalar overload hands it to its Tensor overload's kernel.
at::Tensor wrapped_number(const at::Scalar& s);

// A CPU kernel file's launch: out and its inputs (already operand()s) over their geometry.
RowLaunch make_row_launch(const at::Tensor& out, c10::ArrayRef<at::Tensor> inputs, at::ScalarType dtype,
                          int64_t grain);

// Input `input` (0: the first) of a float16 or bfloat16 launch, where it is a 0-dim CPU tensor
// (a Python number, a 0-dim tensor): its value in float (RowLaunch::is_value), read as torch reads
// a CPU scalar, not rounded to the storage type first. Other launches and inputs are left as they are.
void set_value(RowLaunch& launch, size_t input, const at::Tensor& t);

// A CUDA launch's input: a 0-dim CPU tensor as it is (make_launch passes its value), anything else
// as operand() gives it.
at::Tensor launch_operand(const at::Tensor& t, at::ScalarType dtype, at::Device device);

// The CUDA launcher's view of the same geometry (structgen/pointwise/launch.h), each input read in
// its entry of `dtypes`; a 0-dim CPU input becomes a value in the launch. The host glue adds
// scalars, conditions and the stream.
PointwiseLaunch make_launch(const at::Tensor& out, c10::ArrayRef<at::Tensor> inputs, at::ScalarType dtype,
                            c10::ArrayRef<at::ScalarType> dtypes);
// A formula's number as the launchers read it, checked as Scalar::to<T>() checks it for the
// compute type of `dtype` (a number an int8 kernel cannot hold raises, as torch's kernels do,
// instead of wrapping); a None `Scalar?` is marked absent.
pw::ScalarArg scalar_arg(const at::Scalar& s, at::ScalarType dtype);
pw::ScalarArg scalar_arg(const std::optional<at::Scalar>& s, at::ScalarType dtype);
// The same, unchecked: converted as a wrapped number is (a generated backward op's numbers).
pw::ScalarArg scalar_arg(const at::Scalar& s);
pw::ScalarArg scalar_arg(const std::optional<at::Scalar>& s);

}  // namespace structgen::cpu
