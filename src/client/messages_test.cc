// SPDX-License-Identifier: MIT
// The client's hand-written messages parse with the agent's parser, keep every double exactly,
// and escape hostile strings.
#include "client/messages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <clocale>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "client/client_core.h"
#include "training/protocol.h"

namespace gpumon::client {
namespace {

using nlohmann::json;

TEST(Messages, StepRoundTripsEveryDoubleExactly) {
  StepFields f;
  f.step = 12;
  f.t_start_s = 1764446400.123456789;
  f.cpu_step_s = 0.1 + 0.2;
  f.gpu_step_s = 1e-7;
  f.data_wait_s = 0.02;
  std::string line;
  step_message(f, line);
  const json j = json::parse(line);
  EXPECT_EQ(j["type"], "step");
  EXPECT_EQ(j["step"], 12);
  EXPECT_EQ(j["t_start"].get<double>(), f.t_start_s);
  EXPECT_EQ(j["t_end"].get<double>(), f.t_start_s + f.cpu_step_s);
  EXPECT_EQ(j["cpu_step_s"].get<double>(), f.cpu_step_s);
  EXPECT_EQ(j["gpu_step_s"].get<double>(), 1e-7);
  EXPECT_TRUE(j["mem"].is_null());
  auto parsed = training::parse_message(line);
  ASSERT_TRUE(std::holds_alternative<training::Message>(parsed)) << std::get<std::string>(parsed);
}

TEST(Messages, StepWithAllocatorStatsAndNulls) {
  AllocatorStats m;
  m.allocated_bytes = 1024;
  m.reserved_bytes = 4096;
  m.num_ooms = 0;
  StepFields f;
  f.mem = m;
  std::string line;
  step_message(f, line);
  EXPECT_EQ(line,
            R"({"type":"step","step":0,"t_start":0,"t_end":0,"cpu_step_s":0,"gpu_step_s":null,)"
            R"("data_wait_s":null,"mem":{"allocated":1024,"reserved":4096,"active":null,)"
            R"("inactive_split":null,"allocated_peak":null,"reserved_peak":null,)"
            R"("num_alloc_retries":null,"num_ooms":0}})");
  auto parsed = training::parse_message(line);
  ASSERT_TRUE(std::holds_alternative<training::Message>(parsed));
  const auto& s = std::get<training::Step>(std::get<training::Message>(parsed));
  EXPECT_EQ(s.allocated_bytes, 1024);
  EXPECT_EQ(s.active_bytes, std::nullopt);
  EXPECT_EQ(s.data_wait_s, std::nullopt);  // not measured: never read as 0
}

TEST(Messages, NumbersUseADotUnderAGermanLocale) {
  if (std::setlocale(LC_ALL, "de_DE.UTF-8") == nullptr) GTEST_SKIP() << "no de_DE locale";
  StepFields f;
  f.cpu_step_s = 0.5;
  std::string line;
  step_message(f, line);
  std::setlocale(LC_ALL, "C");
  EXPECT_NE(line.find("\"cpu_step_s\":0.5"), std::string::npos) << line;
}

TEST(Messages, TheDeviceMessageCarriesOnlyTheDeviceFields) {
  HelloFields h;
  h.pid = 5, h.rank = 1, h.device = "cuda:0", h.pci_bus_id = "00000000:18:00.0";
  EXPECT_EQ(device_message(h), R"({"type":"device","torch_version":null,"device":"cuda:0",)"
                               R"("pci_bus_id":"00000000:18:00.0","device_uuid":null})");
}

TEST(Messages, HelloEscapesHostileStrings) {
  HelloFields h;
  h.pid = 42;
  h.rank = 3;
  h.hostname = std::string("a\"b\\c\n\x01\xff", 8);
  h.device = "cuda:0";
  const std::string line = hello_message(h);
  const json j = json::parse(line);  // throws on invalid UTF-8 or a bad escape
  EXPECT_EQ(j["hostname"], "a\"b\\c\n\x01\xEF\xBF\xBD");
  EXPECT_EQ(j["rank"], 3);
  EXPECT_TRUE(j["local_rank"].is_null());
  EXPECT_TRUE(j["torch_version"].is_null());
  EXPECT_EQ(j["v"], 1);
  auto parsed = training::parse_message(line);
  ASSERT_TRUE(std::holds_alternative<training::Message>(parsed));
  EXPECT_EQ(std::get<training::Hello>(std::get<training::Message>(parsed)).device, "cuda:0");
}

TEST(Messages, Oom) {
  EXPECT_EQ(
      oom_message({7, 1 << 30, "cuda:1", "/tmp/b"}),
      R"({"type":"oom","step":7,"requested_bytes":1073741824,"device":"cuda:1","path":"/tmp/b"})");
  EXPECT_EQ(oom_message({0, std::nullopt, std::nullopt, std::nullopt}),
            R"({"type":"oom","step":0,"requested_bytes":null,"device":null})");
  // A path too long for a message is left out; the message stays under the protocol's limit.
  EXPECT_EQ(oom_message({0, std::nullopt, std::nullopt, std::string(4000, 'x')}).find("path"),
            std::string::npos);
}

TEST(ClientCore, TheHelloCarriesTheEnvironmentAndTheDeviceSoTheAgentCanMapIt) {
  ::setenv("RANK", "3", 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "GPU-1234,1", 1);
  ::setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
  ::setenv("TORCHELASTIC_RUN_ID", "exp-42", 1);
  ::setenv("SLURM_JOB_ID", "bad value", 1);  // not a job value: dropped, not sent
  const std::string line = hello_line({"2.1.0", "cuda:1", "0000:18:00.0", "GPU-abcd"});
  ::unsetenv("TORCHELASTIC_RUN_ID");
  ::unsetenv("SLURM_JOB_ID");
  ::unsetenv("RANK");
  ::unsetenv("CUDA_VISIBLE_DEVICES");
  ::unsetenv("CUDA_DEVICE_ORDER");
  auto parsed = training::parse_message(line);
  ASSERT_TRUE(std::holds_alternative<training::Message>(parsed)) << line;
  const auto& h = std::get<training::Hello>(std::get<training::Message>(parsed));
  EXPECT_EQ(h.pid, ::getpid());
  EXPECT_EQ(h.rank, 3);
  EXPECT_EQ(h.device, "cuda:1");
  EXPECT_EQ(h.pci_bus_id, "0000:18:00.0");
  EXPECT_EQ(h.device_uuid, "GPU-abcd");
  EXPECT_EQ(h.cuda_visible_devices, "GPU-1234,1");
  EXPECT_EQ(h.cuda_device_order, "PCI_BUS_ID");
  EXPECT_TRUE(h.hostname.has_value());
  // The job, by the rule the node applies to every GPU process (job/job_identity.h); under a
  // Slurm job its id would come first.
  if (h.job.id_source == "slurm") GTEST_SKIP() << "the test itself runs in a Slurm job";
  EXPECT_EQ(h.job.id, "exp-42");
  EXPECT_EQ(h.job.id_source, "torchelastic");
  EXPECT_EQ(h.job.slurm_job_id, "");
}

TEST(Messages, HelloWritesOnlyTheJobsKnownFields) {
  HelloFields h;
  h.pid = 42;
  h.job.id = "4711";
  h.job.slurm_job_id = "4711";
  const std::string line = hello_message(h);
  EXPECT_NE(line.find(R"("job":{"id":"4711","slurm_job_id":"4711"})"), std::string::npos) << line;
  EXPECT_EQ(hello_message(HelloFields{}).find("job"), std::string::npos);
}

TEST(ClientCore, ASocketGivenIsTakenAsItIsAndNoneFoundSaysWhy) {
  const AgentAttach given = attach_agent({"/nonexistent/agent.sock", true, "", ""});
  EXPECT_TRUE(given.usable()) << "a named socket is retried, never second-guessed";
  EXPECT_EQ(given.socket_path, "/nonexistent/agent.sock");
  const char* xdg = std::getenv("XDG_RUNTIME_DIR");
  const std::string saved = xdg ? xdg : "";
  ::setenv("XDG_RUNTIME_DIR", "/nonexistent-gpumon-test", 1);
  ::unsetenv("GPUMON_AGENT_SOCKET");
  const AgentAttach none = attach_agent({"", false, "", ""});
  if (xdg)
    ::setenv("XDG_RUNTIME_DIR", saved.c_str(), 1);
  else
    ::unsetenv("XDG_RUNTIME_DIR");
  EXPECT_FALSE(none.usable());
  EXPECT_EQ(none.warning_kind, "no-agent");
  EXPECT_NE(none.warning.find("start_agent is off"), std::string::npos) << none.warning;
}

TEST(Messages, EnvIntReadsLikePythonInt) {
  ::setenv("GPUMON_TEST_INT", " 7 ", 1);
  EXPECT_EQ(env_int("GPUMON_TEST_INT"), 7);
  ::setenv("GPUMON_TEST_INT", "-2", 1);
  EXPECT_EQ(env_int("GPUMON_TEST_INT"), -2);
  ::setenv("GPUMON_TEST_INT", "3x", 1);
  EXPECT_EQ(env_int("GPUMON_TEST_INT"), std::nullopt);
  ::setenv("GPUMON_TEST_INT", "", 1);
  EXPECT_EQ(env_int("GPUMON_TEST_INT"), std::nullopt);
  ::unsetenv("GPUMON_TEST_INT");
  EXPECT_EQ(env_int("GPUMON_TEST_INT"), std::nullopt);
}

}  // namespace
}  // namespace gpumon::client
