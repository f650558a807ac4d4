#include "runtime/session.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "framework/plugin/provider_plugin.h"
#include "graph/passes.h"
#include "graph/resource_limits.h"
#include "optimizer/activation_fusion.h"
#include "optimizer/constant_folding.h"
#include "optimizer/dense_chain_fusion.h"
#include "optimizer/gelu_fusion.h"
#include "optimizer/layer_norm_fusion.h"
#include "optimizer/qdq_lookup.h"
#include "optimizer/onnx_rewrites/bias_folding.h"
#include "optimizer/onnx_rewrites/conv_branch_merging.h"
#include "optimizer/onnx_rewrites/concat_conv_split.h"
#include "optimizer/onnx_rewrites/conv_bn_folding.h"
#include "optimizer/onnx_rewrites/conv_scale_folding.h"
#include "optimizer/onnx_rewrites/hard_sigmoid_folding.h"
#include "optimizer/onnx_rewrites/identity_elimination.h"
#include "optimizer/onnx_rewrites/matmul_bn_folding.h"
#include "optimizer/onnx_rewrites/pad_conv_folding.h"
#include "optimizer/onnx_rewrites/transpose_optimization.h"
#include "optimizer/onnx_rewrites/qdq_fusion.h"
#include "optimizer/onnx_rewrites/shape_simplification.h"
#include "placement/partitioner.h"
#include "framework/env_switch.h"
#include "runtime/run_queue_wait.h"

namespace tandem {

namespace {
std::mutex factories_mu;
std::map<std::string, ProviderFactory>& Factories() {
  static auto* f = new std::map<std::string, ProviderFactory>;
  return *f;
}
}  // namespace

void RegisterProviderFactory(const std::string& name, ProviderFactory factory) {
  std::lock_guard<std::mutex> lock(factories_mu);
  Factories()[name] = std::move(factory);
}

absl::StatusOr<std::unique_ptr<ExecutionProvider>> CreateProvider(const std::string& name, bool preview,
                                                                  const ProviderOptions& options) {
  if (name == "cpu") return CreateCpuProvider();
  {
    std::lock_guard<std::mutex> lock(factories_mu);
    auto it = Factories().find(name);
    if (it != Factories().end()) return it->second();
  }
  return preview ? CreatePluginPreview(name) : CreatePluginProvider(name, options);
}

Session::~Session() = default;

namespace {
// A hash of the tensors' shapes (FNV-1a over the dims, with a separator per tensor).
uint64_t ShapeKey(const std::vector<Tensor>& tensors) {
  uint64_t key = 1469598103934665603ull;
  for (const Tensor& t : tensors) {
    for (int64_t d : t.dims()) key = (key ^ static_cast<uint64_t>(d)) * 1099511628211ull;
    key = (key ^ 0xffu) * 1099511628211ull;
  }
  return key;
}

// Gives every subgraph attribute of `g` (recursively) its own copy: Graph copies share
// bodies through shared_ptr, and placement renames what bodies read.
void OwnSubgraphs(Graph& g) {
  for (Node& n : g.nodes)
    for (auto& [key, a] : n.attributes)
      if (a.kind == Attribute::Kind::kGraph && a.g) {
        a.g = std::make_shared<Graph>(*a.g);
        OwnSubgraphs(*a.g);
      }
}

// Folding, dead code, fusions, then placement: on `graph` itself, or, for kLowestCost
// between several providers, on a copy first. Returns true (graph untouched) when that
// copy's cheapest placement puts every node on the host, so the caller drops the others.
absl::StatusOr<bool> PlaceGraph(Graph& graph, ExecutionProvider& cpu,
                                const std::vector<std::unique_ptr<ExecutionProvider>>& providers,
                                const SessionOptions& options, SessionStats& stats) {
  const bool trial = options.placement == PartitionOptions::Policy::kLowestCost && providers.size() > 1;
  Graph copy;
  if (trial) {
    copy = graph;
    OwnSubgraphs(copy);
  }
  Graph& g = trial ? copy : graph;
  stats = SessionStats{};
  // Quantized convolutions and MatMuls (QDQ) before folding turns their int8 weights into float ones.
  const int qdq_nodes = options.fusion ? FuseQdqNodes(g) + FuseQdqLookups(g) : 0;
  if (options.constant_folding) {
    auto folded = FoldConstants(g, cpu);
    if (!folded.ok()) return folded.status();
    // Then shape arithmetic the folding could not do (Shape of a value whose dims shape
    // inference knows, though the value itself is computed): PyTorch's interpolate(size=)
    // exports Resize sizes as Concat(Shape(x)[:2], hw), which as a constant lets the CPU
    // run the Resize channel-blocked (SegFormer's decode head).
    stats.nodes_folded = *folded + SimplifyShapes(g);
  }
  stats.nodes_removed = EliminateDeadCode(g) + EliminateCopyingNodes(g);
  // Keras models through tf2onnx: the NHWC<->NCHW Transpose pairs around each convolution
  // pushed together and cancelled, hard_sigmoid's Add, Clip and Mul made one HardSigmoid
  // (before the bias folding takes its Add of 3); then a zero Pad before a convolution,
  // BatchNormalization as Mul and Add after it, folded into the Conv (none of it in
  // training graphs, whose constants are the parameters being trained).
  const bool inference_rewrites = options.fusion && !g.HasGradientNodes();
  if (inference_rewrites && OptimizeTransposes(g) > 0) stats.nodes_removed += EliminateIdentities(g);
  const int hard_sigmoids = inference_rewrites ? FoldSpelledOutHardSigmoids(g) : 0;
  // Then parallel branches of one input merged into one Conv (timm's RepVGG-style models
  // before reparameterization), in rounds: a merged branch's scale and bias fold, and
  // then it merges with the next branch (FastViT's RepMixer becomes one convolution).
  int folded_into_convs = inference_rewrites ? FoldPadsIntoConvs(g) : 0;
  for (int round = 0; inference_rewrites && round < 4; ++round) {
    const int folded = FoldConvBatchNorm(g) + FoldMatMulBatchNorm(g) + MergeConvBranches(g) + FoldConvScales(g) +
                       FoldBiasAdds(g, /*convolutions_only=*/true);
    folded_into_convs += folded;
    if (!folded) break;
  }
  // A provider without a fused kernel declines the fused node and the CPU runs it. Dense
  // chains (of two layers or more) only when the CPU runs everything: a GPU would
  // otherwise lose the MLP's layers.
  // Concats into convolutions only for the CPU alone: its convolutions add the parts
  // (residual-sum fusion); elsewhere the parts' Adds would be passes of their own.
  // HardSwish, HardSigmoid, Gelu, Mish and SiLU likewise (only the CPU's kernels apply them), and
  // GELUs spelled out in element-wise nodes become one Gelu (no CUDA kernel).
  const bool cpu_alone = providers.size() == 1 && providers[0]->name() == "cpu";
  stats.nodes_fused = qdq_nodes + 2 * hard_sigmoids + folded_into_convs;
  if (options.fusion && cpu_alone) stats.nodes_fused += SplitConcatIntoConvs(g);
  if (options.fusion) {  // in this order: each pass sees the nodes the one before made
    if (providers.size() == 1) stats.nodes_fused += FuseDenseChains(g, 2);
    stats.nodes_fused += FuseLayerNorm(g);
    if (cpu_alone) stats.nodes_fused += FuseGelu(g);
    stats.nodes_fused +=
        FuseActivations(g, cpu_alone ? FusableActivations::kCpu : FusableActivations::kEveryProvider);
  }
  std::vector<ExecutionProvider*> order;
  for (const auto& p : providers) order.push_back(p.get());
  PartitionOptions po;
  po.policy = options.placement;
  po.outputs_on_host = options.outputs_on_host;
  po.dim_values = options.dim_values;
  po.resident_inputs = options.resident_inputs;
  auto part = Partition(g, order, po);
  if (!part.ok()) return part.status();
  stats.placement = std::move(*part);
  const auto& used = stats.placement.nodes_per_provider;
  if (trial && used.size() == 1 && used.count(cpu.name())) return true;
  if (trial) graph = std::move(copy);
  return false;
}
}  // namespace

absl::StatusOr<std::unique_ptr<Session>> Session::Load(const std::string& path,
                                                       const SessionOptions& options) {
  auto graph = ImportModelFile(path, options.import);
  if (!graph.ok()) return graph.status();
  return FromGraph(std::move(*graph), options);
}

absl::StatusOr<std::unique_ptr<Session>> Session::FromGraph(Graph graph,
                                                            const SessionOptions& options) {
  std::unique_ptr<Session> s(new Session());
  s->num_threads_ = options.num_threads > 0 ? options.num_threads : omp_get_num_procs();
  omp_set_num_threads(s->num_threads_);
  for (const std::string& name : options.providers) {
    auto p = CreateProvider(name, options.placement_preview, options.provider_options);
    if (!p.ok()) return p.status();
    s->providers_.push_back(std::move(*p));
  }
  ExecutionProvider* cpu = nullptr;
  for (auto& p : s->providers_)
    if (p->name() == "cpu") cpu = p.get();
  if (!cpu) {  // shape arithmetic and folding always have the CPU
    s->providers_.push_back(CreateCpuProvider());
    cpu = s->providers_.back().get();
  }
  auto placed = PlaceGraph(graph, *cpu, s->providers_, options, s->stats_);
  if (!placed.ok()) return placed.status();
  if (*placed) {  // cheapest all on the host: a CPU session, with the CPU-only passes
    PartitionResult estimates = s->stats_.placement;  // the comparison stays reported
    s->providers_.erase(std::remove_if(s->providers_.begin(), s->providers_.end(),
                                       [cpu](const auto& p) { return p.get() != cpu; }),
                        s->providers_.end());
    auto again = PlaceGraph(graph, *cpu, s->providers_, options, s->stats_);
    if (!again.ok()) return again.status();
    estimates.nodes_per_provider = s->stats_.placement.nodes_per_provider;
    estimates.copies_inserted = 0;
    s->stats_.placement = std::move(estimates);
  }
  std::map<std::string, ExecutionProvider*> by_name;
  for (auto& p : s->providers_) by_name[p->name()] = p.get();
  if (options.fusion)
    for (auto& p : s->providers_) s->stats_.nodes_provider_rewritten += p->OptimizeGraph(graph);
  s->graph_ = std::make_unique<Graph>(std::move(graph));
  s->providers_by_name_ = std::move(by_name);
  s->profiling_ = options.profiling;
  s->tracing_ = options.tracing;
  s->preview_ = options.placement_preview;
  s->device_graphs_ = options.device_graphs;
  if (s->preview_) return s;  // placed, not runnable: no kernels are made
  const bool host_only = s->providers_.size() == 1 && s->providers_.front().get() == cpu;
  if (options.adaptive_threads && s->num_threads_ > 1 && host_only && !SwitchedOff("TANDEM_ADAPTIVE_THREADS")) {
    s->governor_ = std::make_unique<ThreadGovernor>(
        s->num_threads_, options.run_queue_wait ? options.run_queue_wait : ProcessRunQueueWaitUs);
    const char* log = std::getenv("TANDEM_ADAPTIVE_THREADS");
    s->log_team_changes_ = log && std::strcmp(log, "log") == 0;
  }
  auto plan = s->AcquirePlan(s->num_threads_);  // builds the first plan now: errors surface at load
  if (!plan.ok()) return plan.status();
  s->ReleasePlan(*plan, s->num_threads_);
  return s;
}

absl::StatusOr<Plan*> Session::AcquirePlan(int threads) {
  if (preview_)
    return absl::FailedPreconditionError("[session] a placement preview (no device) cannot run");
  {
    std::lock_guard<std::mutex> lock(plans_mu_);
    std::vector<Plan*>& idle = idle_plans_[threads];
    if (!idle.empty()) {
      Plan* p = idle.back();
      idle.pop_back();
      return p;
    }
  }
  auto plan = Plan::Build(*graph_, providers_by_name_, threads);
  if (!plan.ok()) return plan.status();
  (*plan)->set_profiling(profiling_, tracing_);
  if (device_graphs_) (*plan)->EnableCapture();
  std::lock_guard<std::mutex> lock(plans_mu_);
  plans_.push_back(std::move(*plan));
  return plans_.back().get();
}

void Session::ReleasePlan(Plan* plan, int threads) {
  std::lock_guard<std::mutex> lock(plans_mu_);
  idle_plans_[threads].push_back(plan);
}

int Session::TeamForNextRun() {
  std::lock_guard<std::mutex> lock(plans_mu_);
  return governor_ && !profiling_ ? governor_->Threads() : num_threads_;
}

void Session::ReportRun(int threads, uint64_t shape_key, double run_us, double end_us) {
  std::lock_guard<std::mutex> lock(plans_mu_);
  ++runs_per_team_size_[threads];
  if (!governor_ || profiling_) return;
  const int64_t changes = governor_->changes();
  governor_->Report(threads, shape_key, run_us, end_us);
  if (log_team_changes_ && governor_->changes() != changes)
    std::fprintf(stderr, "[tandem] %s\n", governor_->Describe().c_str());
}

std::map<int, int64_t> Session::runs_per_team_size() const {
  std::lock_guard<std::mutex> lock(plans_mu_);
  return runs_per_team_size_;
}

std::string Session::thread_governor_status() const {
  std::lock_guard<std::mutex> lock(plans_mu_);
  return governor_ ? governor_->Describe() : "";
}

void Session::SetProfiling(bool profiling, bool tracing) {
  std::lock_guard<std::mutex> lock(plans_mu_);
  profiling_ = profiling;
  tracing_ = tracing;
  for (auto& p : plans_) p->set_profiling(profiling, tracing);
}

void Session::ResetProfile() {
  std::lock_guard<std::mutex> lock(plans_mu_);
  for (auto& p : plans_) p->ResetProfile();
}

std::vector<TraceEvent> Session::trace() const {
  std::lock_guard<std::mutex> lock(plans_mu_);
  std::vector<TraceEvent> all;
  for (const auto& p : plans_) all.insert(all.end(), p->trace().begin(), p->trace().end());
  std::sort(all.begin(), all.end(), [](const TraceEvent& a, const TraceEvent& b) { return a.start_us < b.start_us; });
  return all;
}

std::vector<StepProfile> Session::profile() const {
  std::lock_guard<std::mutex> lock(plans_mu_);
  if (plans_.empty()) return {};  // a placement preview
  std::vector<StepProfile> total = plans_.front()->profile();
  for (size_t i = 1; i < plans_.size(); ++i) {
    std::vector<StepProfile> more = plans_[i]->profile();
    for (size_t k = 0; k < total.size() && k < more.size(); ++k) {
      total[k].total_us += more[k].total_us;
      total[k].calls += more[k].calls;
    }
  }
  return total;
}

absl::StatusOr<std::vector<Tensor>> Session::Run(const std::map<std::string, Tensor>& feeds) {
  // A misspelt name is reported before the input it was meant for is called missing.
  size_t matched = 0;
  for (const ValueInfo& vi : graph_->inputs) matched += feeds.count(vi.name);
  if (matched != feeds.size())
    for (const auto& [name, t] : feeds) {
      bool known = false;
      for (const ValueInfo& vi : graph_->inputs) known |= vi.name == name;
      if (!known) return absl::NotFoundError("[run] the model has no input named '" + name + "'");
    }
  std::vector<Tensor> inputs(graph_->inputs.size());  // an absent one stays undefined: missing
  for (size_t i = 0; i < graph_->inputs.size(); ++i)
    if (auto it = feeds.find(graph_->inputs[i].name); it != feeds.end()) inputs[i] = it->second;
  return RunInOrder(std::move(inputs));
}

absl::StatusOr<std::vector<Tensor>> Session::RunInOrder(std::vector<Tensor> inputs) {
  if (inputs.size() != graph_->inputs.size())
    return absl::InvalidArgumentError(absl::StrCat("[run] the model takes ", graph_->inputs.size(),
                                                   " inputs, got ", inputs.size()));
  struct Bound { const std::string* symbol; int64_t size; const std::string* input; };
  std::vector<Bound> symbols;  // symbolic dims seen so far (few: a vector beats a map)
  for (size_t i = 0; i < graph_->inputs.size(); ++i) {
    const ValueInfo& vi = graph_->inputs[i];
    const Tensor& t = inputs[i];
    if (!t.defined())
      return absl::InvalidArgumentError("[run] missing input '" + vi.name + "' (" +
                                        vi.TypeString() + ")");
    if (vi.kind != ValueKind::kTensor || !t.is_tensor()) {
      // Sequence / optional inputs: the kind must match (a bare tensor or sequence is
      // accepted for an optional input and wrapped), then the element type.
      Tensor v = t;
      if (vi.kind == ValueKind::kOptional && !t.is_optional()) v = Tensor::Optional(t);
      const Tensor& inner = v.is_optional() ? v.optional_value() : v;
      ValueKind want = vi.kind == ValueKind::kOptional ? vi.optional_of : vi.kind;
      bool ok = v.kind() == vi.kind && (!inner.defined() || inner.kind() == want);
      if (ok && vi.elem_type != DataType::kUndefined && v.dtype() != DataType::kUndefined &&
          v.dtype() != vi.elem_type)
        ok = false;
      if (!ok) {
        std::string got = v.is_sequence()   ? absl::StrCat("seq(", DataTypeName(v.dtype()), ")")
                          : v.is_optional() ? absl::StrCat("an optional of ", DataTypeName(v.dtype()))
                                            : absl::StrCat("a ", DataTypeName(t.dtype()), " tensor");
        return absl::InvalidArgumentError("[run] input '" + vi.name + "' is " + got +
                                          ", the model expects " + vi.TypeString());
      }
      inputs[i] = v;
      continue;
    }
    std::string mismatch = FeedMismatch(vi, t);
    if (!mismatch.empty())
      return absl::InvalidArgumentError("[run] input '" + vi.name + "' " + mismatch);
    // A symbolic dim ("batch") must have one size across all inputs.
    for (size_t d = 0; vi.shape.rank_known && d < vi.shape.dims.size(); ++d) {
      const std::string& sym = vi.shape.dims[d].symbol;
      if (sym.empty()) continue;
      auto bound = std::find_if(symbols.begin(), symbols.end(), [&](const Bound& b) { return *b.symbol == sym; });
      if (bound == symbols.end()) {
        symbols.push_back({&sym, t.dims()[d], &vi.name});
      } else if (bound->size != t.dims()[d]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "[run] input '", vi.name, "' has shape ", DimsToString(t.dims()), ": dim ", d, " ('", sym,
            "') is ", t.dims()[d], " but input '", *bound->input, "' gave it ", bound->size));
      }
    }
  }
  const int threads = TeamForNextRun();
  auto plan = AcquirePlan(threads);
  if (!plan.ok()) return plan.status();
  // Gives the plan back even when a kernel throws (e.g. std::bad_alloc), and the calling
  // thread its OpenMP team size (steps set their own: runtime/plan.h ThreadsFor).
  struct Return {
    Session* s;
    Plan* p;
    int threads, caller_threads;
    ~Return() {
      s->ReleasePlan(p, threads);
      omp_set_num_threads(caller_threads);
    }
  } give_back{this, *plan, threads, omp_get_max_threads()};
  const uint64_t shape_key = governor_ ? ShapeKey(inputs) : 0;  // it compares runs of equal shapes
  const auto start = std::chrono::steady_clock::now();
  auto outputs = (*plan)->Run(std::move(inputs));
  const auto end = std::chrono::steady_clock::now();
  if (outputs.ok())
    ReportRun(threads, shape_key, std::chrono::duration<double, std::micro>(end - start).count(),
              std::chrono::duration<double, std::micro>(end.time_since_epoch()).count());
  return outputs;
}

std::string FeedMismatch(const ValueInfo& vi, const Tensor& t) {
  if (vi.dtype != DataType::kUndefined && t.dtype() != vi.dtype)
    return absl::StrCat("has type ", DataTypeName(t.dtype()), ", the model expects ",
                        DataTypeName(vi.dtype));
  if (vi.shape.rank_known) {
    bool ok = static_cast<size_t>(t.rank()) == vi.shape.dims.size();
    for (size_t d = 0; ok && d < vi.shape.dims.size(); ++d)
      ok = !vi.shape.dims[d].known() || vi.shape.dims[d].value == t.dims()[d];
    if (!ok)
      return "has shape " + DimsToString(t.dims()) + ", the model expects " + vi.shape.ToString();
  }
  return "";
}

std::map<std::string, int64_t> DimValuesOf(const std::vector<ValueInfo>& inputs,
                                           const std::map<std::string, Dims>& dims) {
  std::map<std::string, int64_t> out;
  for (const ValueInfo& vi : inputs) {
    auto it = dims.find(vi.name);
    if (it == dims.end() || !vi.shape.rank_known || vi.shape.dims.size() != it->second.size()) continue;
    for (size_t d = 0; d < vi.shape.dims.size(); ++d)
      if (!vi.shape.dims[d].known() && !vi.shape.dims[d].symbol.empty())
        out.emplace(vi.shape.dims[d].symbol, it->second[d]);
  }
  return out;
}

std::vector<ExecutionProvider*> Session::providers() const {
  std::vector<ExecutionProvider*> out;
  for (const auto& p : providers_) out.push_back(p.get());
  return out;
}

std::string Session::device_graph_status() const {
  std::lock_guard<std::mutex> lock(plans_mu_);
  if (!device_graphs_) return "device graphs are off";
  for (const auto& p : plans_)
    if (!p->capture_status().empty()) return p->capture_status();
  return "";
}

int64_t Session::device_graph_replays() const {
  std::lock_guard<std::mutex> lock(plans_mu_);
  int64_t n = 0;
  for (const auto& p : plans_) n += p->replays();
  return n;
}

absl::StatusOr<Tensor> Session::ToDevice(const Tensor& t) const {
  ExecutionProvider& p = primary_provider();
  if (!t.is_tensor() || t.device() == p.device()) return t;
  if (t.device().type != DeviceType::kCpu)
    return absl::InvalidArgumentError("[session] ToDevice expects a host tensor, got one on " +
                                      t.device().ToString());
  Tensor dst;
  try {
    dst = AllocateTensor(p.allocator(), t.dtype(), t.dims());
  } catch (const std::bad_alloc& e) {
    return absl::ResourceExhaustedError("[" + p.name() + "] ToDevice: " + AllocationFailureMessage(e));
  }
  if (t.bytes() && !dst.raw())
    return absl::ResourceExhaustedError("[" + p.name() + "] out of memory: could not allocate " +
                                        std::to_string(t.bytes()) + " bytes");
  absl::Status s = p.Copy(t, dst);
  if (!s.ok()) return s;
  return dst;
}

absl::StatusOr<Tensor> Session::ToHost(const Tensor& t) const { return CopyToHost(providers(), t); }

absl::Status Session::Synchronize() const {
  for (const auto& p : providers_)
    if (absl::Status s = p->Synchronize(); !s.ok()) return s;
  return absl::OkStatus();
}

size_t Session::peak_memory_bytes() const {
  size_t total = 0;
  for (const auto& p : providers_) total += p->allocator().peak_bytes();
  return total;
}

}  // namespace tandem
