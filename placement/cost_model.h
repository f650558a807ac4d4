// The cost estimates behind ExecutionProvider::Capability for cost-based placement
// (PartitionOptions::Policy::kLowestCost): a node's work from its static shapes, and a
// device's speed — a roofline: launch overhead + max(flops / flop rate, bytes / bandwidth).
#pragma once
#include <cstdint>
#include <string>

#include "framework/kernel.h"

namespace tandem {

struct DeviceSpeed {
  double flops_per_us = 0;   // sustained float32 multiply-adds x 2 per microsecond
  double bytes_per_us = 0;   // memory bandwidth
  double launch_us = 0;      // fixed cost per kernel
};

struct NodeWork {
  double flops = 0;
  double bytes = 0;   // inputs read + outputs written
};

// MatMul/Gemm (and their fused forms): 2·M·N·K; Conv (fused or not) and ConvTranspose:
// 2·|output|·|W| / M; everything else one operation per output element. Values of
// unknown shape count as 4 KiB.
NodeWork EstimateWork(const KernelInfo& info);
double EstimateUs(const NodeWork& work, const DeviceSpeed& speed);

// A GPU's speed before it is measured: H100-class float32 (~20 TFLOP/s sustained, ~2 TB/s)
// and ~10 us per kernel launch. Not yet calibrated on a GPU.
DeviceSpeed DefaultGpuSpeed();
// Host <-> GPU: a launch plus the bytes at ~20 GB/s (pinned PCIe).
double GpuCopyCostUs(int64_t bytes);

// This machine's CPU speed with all its cores: measured once (a 512x512 sgemm and a
// 64 MiB copy, ~0.1 s) and cached in $XDG_CACHE_HOME/tandem (else ~/.cache/tandem) per
// host name and core count; later processes read the file. `sgemm_us` times one
// 512x512x512 sgemm (the CPU provider passes its oneDNN one).
DeviceSpeed CpuSpeed(double (*sgemm_us)());

}  // namespace tandem
