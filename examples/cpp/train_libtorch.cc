// SPDX-License-Identifier: MIT
// A small libtorch training loop reporting its steps to gpumon (docs/cpp-client.md): a linear
// model learns y = x.w + b from synthetic data with SGD, on CUDA when available, else the CPU.
//
//   gpumon agent -o run.gpumon &            # or let Monitor::start() start one
//   ./train_libtorch [--steps N] [--loader-ms MS]
//   gpumon export run.gpumon --steps --format jsonl
//
// One translation unit on purpose: libtorch's headers are heavy to compile.
#include <torch/torch.h>
#include <torch/version.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "gpumon/monitor.h"

#if GPUMON_EXAMPLE_CUDA  // a CUDA build of libtorch (CMake found TORCH_CUDA_LIBRARIES)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace {

// The caching allocator's "all pools" counters (index 0, StatType::AGGREGATE, in torch 1.13
// and 2.x alike), read by gpumon at most once per MonitorOptions::allocator_interval_s.
gpumon::AllocatorStats cuda_allocator_stats([[maybe_unused]] int device) {
  gpumon::AllocatorStats out;
#if GPUMON_EXAMPLE_CUDA
  const auto s = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  out.allocated_bytes = s.allocated_bytes[0].current;
  out.reserved_bytes = s.reserved_bytes[0].current;
  out.active_bytes = s.active_bytes[0].current;
  out.inactive_split_bytes = s.inactive_split_bytes[0].current;
  out.allocated_peak_bytes = s.allocated_bytes[0].peak;
  out.reserved_peak_bytes = s.reserved_bytes[0].peak;
  out.num_alloc_retries = s.num_alloc_retries;
  out.num_ooms = s.num_ooms;
#endif
  return out;
}

struct Args {
  int steps = 40;
  int loader_ms = 0;  // simulated data loader latency
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--steps") == 0) a.steps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--loader-ms") == 0) a.loader_ms = std::atoi(argv[i + 1]);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  torch::manual_seed(0);
  const bool cuda = torch::cuda::is_available();
  const torch::Device device = cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);

  gpumon::MonitorOptions options;
  options.device = cuda ? "cuda:0" : "cpu";
  options.torch_version = TORCH_VERSION;
#if GPUMON_EXAMPLE_CUDA
  if (cuda) options.allocator_source = [] { return cuda_allocator_stats(0); };
#endif
  gpumon::Monitor mon = gpumon::Monitor::start(options);

  constexpr int kFeatures = 16;
  constexpr int kBatch = 64;
  const auto true_w = torch::randn({kFeatures, 1});
  const auto x_all = torch::randn({args.steps * kBatch, kFeatures});
  const auto y_all = x_all.mm(true_w) + 0.5 + 0.01 * torch::randn({args.steps * kBatch, 1});

  torch::nn::Linear model(kFeatures, 1);
  model->to(device);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));

  int next = 0;
  const auto next_batch = [&] {  // the "data loader"
    if (args.loader_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(args.loader_ms));
    auto x = x_all.narrow(0, next * kBatch, kBatch).to(device);
    auto y = y_all.narrow(0, next * kBatch, kBatch).to(device);
    ++next;
    return std::make_pair(x, y);
  };

  float loss_value = 0;
  try {
    mon.begin_epoch();
    for (int i = 0; i < args.steps; ++i) {
      auto [x, y] = mon.fetch(next_batch);  // the wait for data, counted in this step
      optimizer.zero_grad();
      auto loss = torch::mse_loss(model->forward(x), y);
      loss.backward();
      optimizer.step();
      if (i + 1 == args.steps) loss_value = loss.item<float>();
      mon.step();  // the step ends here (or: `auto s = mon.scoped_step();` around the body)
    }
  } catch (const c10::OutOfMemoryError& e) {
    mon.oom(0);  // the requested size is in e.what() only
    mon.close();
    throw;
  }
  const bool attached = mon.active();
  mon.close();
  std::printf("device %s, %d steps, final loss %.4f, gpumon %s (%llu messages sent)\n",
              options.device.c_str(), args.steps, loss_value, attached ? "active" : "inactive",
              static_cast<unsigned long long>(mon.stats().sent));
  return 0;
}
