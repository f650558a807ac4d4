// ai.tandem QLinearLookup (optimizer/qdq_lookup.h): Y[i] = Table[X[i]] for 8-bit X (uint8: index
// x; int8: x + 128) and a 256-value 8-bit Table, Y of the table's type; any layout (element by
// element).
#include <string>

#include "providers/cpu/kernel_util.h"
#include "providers/cpu/kernels/register.h"

namespace tandem::cpu {
namespace {

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

class QLinearLookup : public Kernel {
 public:
  explicit QLinearLookup(const KernelInfo&) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* table = ctx.input(1);
    if (!x || !table || !Is8Bit(x->dtype()) || !Is8Bit(table->dtype()) || table->numel() != 256)
      return absl::InvalidArgumentError("QLinearLookup takes an 8-bit X and an 8-bit Table of 256 values, got " +
                                        std::string(x ? DataTypeName(x->dtype()) : "none") + " and " +
                                        (table ? DataTypeName(table->dtype()) + DimsToString(table->dims()) : "none"));
    Tensor& y = ctx.AllocateOutput(0, table->dtype(), x->dims());
    const uint8_t* in = static_cast<const uint8_t*>(x->raw());
    const uint8_t* t = static_cast<const uint8_t*>(table->raw());
    uint8_t* out = static_cast<uint8_t*>(y.raw());
    const uint8_t flip = x->dtype() == DataType::kInt8 ? 0x80 : 0;  // int8 x's bits ^ 0x80 = x + 128
    ParallelBlocks(x->numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = t[in[i] ^ flip];
    });
    return absl::OkStatus();
  }
};

}  // namespace

void RegisterQLinearLookupKernels(KernelRegistry& r) {
  r.Add(TandemKernel("QLinearLookup", {DataType::kUint8, DataType::kInt8}, Make<QLinearLookup>()));
}

}  // namespace tandem::cpu
