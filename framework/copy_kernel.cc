#include "framework/copy_kernel.h"

#include <mutex>

#include "framework/execution_provider.h"

namespace tandem {
namespace {

class CopyKernel : public Kernel {
 public:
  explicit CopyKernel(const KernelInfo& info)
      : provider_(info.provider),
        to_host_(info.node.attr_string("to", "") == "cpu"),
        constant_(info.constant_input(0) != nullptr) {}

  absl::Status Compute(KernelContext& ctx) override {
    const Tensor* src = ctx.input(0);
    if (!src) return absl::InvalidArgumentError("missing input 0");
    if (!src->is_tensor())
      return absl::UnimplementedError("only tensors can change device (got a sequence or optional)");
    const Device target = to_host_ ? Device{DeviceType::kCpu, 0} : provider_->device();
    if (src->device() == target) {
      ctx.SetOutput(0, *src);
      return absl::OkStatus();
    }
    if (constant_) {
      std::lock_guard<std::mutex> lock(mu_);
      if (cached_.defined()) {
        ctx.SetOutput(0, cached_);
        return absl::OkStatus();
      }
    }
    Tensor dst;
    if (!to_host_) {
      dst = AllocateTensor(ctx.allocator(), src->dtype(), src->dims());
    } else if (Allocator* host = provider_->host_allocator()) {
      dst = AllocateTensor(*host, src->dtype(), src->dims());
    } else {
      dst = Tensor::Host(src->dtype(), src->dims());
    }
    if (src->bytes() && !dst.raw())
      return absl::ResourceExhaustedError("out of memory: could not allocate " +
                                          std::to_string(src->bytes()) + " bytes on " +
                                          target.ToString() + " for the copy");
    absl::Status s = provider_->Copy(*src, dst);
    if (!s.ok()) return s;
    if (constant_) {
      std::lock_guard<std::mutex> lock(mu_);
      cached_ = dst;
    }
    ctx.SetOutput(0, std::move(dst));
    return absl::OkStatus();
  }

 private:
  ExecutionProvider* provider_;
  bool to_host_;
  bool constant_;
  std::mutex mu_;
  Tensor cached_;
};

}  // namespace

bool IsDeviceCopy(const Node& n) { return n.domain == kTandemDomain && n.op_type == "Copy"; }

void RegisterCopyKernel(KernelRegistry& registry) {
  KernelDef d;
  d.domain = "ai.tandem";
  d.op = "Copy";
  d.since = 1;
  d.any_device = true;
  d.create = Make<CopyKernel>();
  registry.Add(std::move(d));
}

}  // namespace tandem
