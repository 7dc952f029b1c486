// SPDX-License-Identifier: MIT
#include "training/protocol.h"

#include <gtest/gtest.h>

namespace gpumon::training {
namespace {

std::string error_of(std::string_view line) {
  auto r = parse_message(line);
  auto* e = std::get_if<std::string>(&r);
  return e ? *e : std::string();
}

Message message_of(std::string_view line) {
  auto r = parse_message(line);
  if (auto* e = std::get_if<std::string>(&r)) ADD_FAILURE() << line << ": " << *e;
  return std::get<Message>(r);
}

TEST(AgentProtocol, ParsesAFullStep) {
  const Message m =
      message_of(R"({"type":"step","step":12,"t_start":1764446400.5,"t_end":1764446400.625,)"
                 R"("cpu_step_s":0.125,"gpu_step_s":0.1,"data_wait_s":0.02,"mem":{"allocated":100,)"
                 R"("reserved":200,"active":90,"inactive_split":10,"allocated_peak":150,)"
                 R"("reserved_peak":250,"num_alloc_retries":1,"num_ooms":0}})");
  const auto& s = std::get<Step>(m);
  EXPECT_EQ(s.step, 12);
  EXPECT_EQ(s.t_start_s, 1764446400.5);
  EXPECT_EQ(s.t_end_s, 1764446400.625);
  EXPECT_EQ(s.cpu_step_s, 0.125);
  EXPECT_EQ(s.gpu_step_s, 0.1);
  EXPECT_EQ(s.data_wait_s, 0.02);
  EXPECT_EQ(s.allocated_bytes, 100);
  EXPECT_EQ(s.reserved_bytes, 200);
  EXPECT_EQ(s.active_bytes, 90);
  EXPECT_EQ(s.inactive_split_bytes, 10);
  EXPECT_EQ(s.allocated_peak_bytes, 150);
  EXPECT_EQ(s.reserved_peak_bytes, 250);
  EXPECT_EQ(s.num_alloc_retries, 1);
  EXPECT_EQ(s.num_ooms, 0);
}

TEST(AgentProtocol, NullsAreMissing) {
  const Message m = message_of(
      R"({"type":"step","step":0,"t_start":1,"t_end":1,"cpu_step_s":0,"gpu_step_s":null,)"
      R"("mem":null})");
  const auto& s = std::get<Step>(m);
  EXPECT_EQ(s.gpu_step_s, std::nullopt);
  EXPECT_EQ(s.data_wait_s, std::nullopt);  // absent: not measured, never 0
  EXPECT_EQ(s.allocated_bytes, std::nullopt);
  EXPECT_EQ(s.num_ooms, std::nullopt);
}

TEST(AgentProtocol, HelloOomByeAndUnknown) {
  const Message h =
      message_of(R"({"type":"hello","v":1,"pid":77,"rank":1,"local_rank":1,"world_size":2,)"
                 R"("hostname":"n1","torch_version":"1.13.1","device":"cpu"})");
  const auto& hello = std::get<Hello>(h);
  EXPECT_EQ(hello.pid, 77);
  EXPECT_EQ(hello.rank, 1);
  EXPECT_EQ(hello.world_size, 2);
  EXPECT_EQ(hello.hostname, "n1");
  EXPECT_EQ(hello.device, "cpu");
  EXPECT_NE(hello.json.find(R"("torch_version":"1.13.1")"), std::string::npos);
  const auto oom = std::get<Oom>(message_of(R"({"type":"oom","step":5,"requested_bytes":1024})"));
  EXPECT_EQ(oom.step, 5);
  EXPECT_EQ(oom.requested_bytes, 1024);
  EXPECT_TRUE(std::holds_alternative<Bye>(message_of(R"({"type":"bye"})")));
  EXPECT_EQ(std::get<Unknown>(message_of(R"({"type":"later"})")).type, "later");
}

TEST(AgentProtocol, AnErrorCarriesTheExceptionAndKeepsTheMessage) {
  const auto e = std::get<Error>(message_of(
      R"({"type":"error","exception":"ValueError","message":"bad","where":"t.py:3","step":7})"));
  EXPECT_EQ(e.exception, "ValueError");
  EXPECT_EQ(
      e.json,
      R"({"exception":"ValueError","message":"bad","step":7,"type":"error","where":"t.py:3"})");
  EXPECT_EQ(error_of(R"({"type":"error"})"), "\"exception\" is required");
  EXPECT_EQ(error_of(R"({"type":"error","exception":3})"), "\"exception\" must be a string");
  EXPECT_EQ(error_of(R"({"type":"error","exception":"E","step":"x"})"),
            "\"step\" must be an integer");
}

TEST(AgentProtocol, ADeviceNamedLaterIsMergedIntoTheHello) {
  const auto d = std::get<DeviceUpdate>(message_of(
      R"({"type":"device","torch_version":"1.13.1","device":"cuda:1","pci_bus_id":"0000:19:00.0"})"));
  EXPECT_EQ(d.device, "cuda:1");
  auto hello = std::get<Hello>(message_of(R"({"type":"hello","pid":77,"rank":1})"));
  apply_device(hello, d);
  EXPECT_EQ(hello.device, "cuda:1");
  EXPECT_EQ(hello.pci_bus_id, "0000:19:00.0");
  EXPECT_EQ(hello.rank, 1) << "the other fields stay";
  EXPECT_NE(hello.json.find(R"("device":"cuda:1")"), std::string::npos) << hello.json;
  const auto e = rank_event(5, 77, 1, "device", hello.json);
  ASSERT_TRUE(e.carries_hello() && e.hello);
  EXPECT_EQ(e.hello->device, "cuda:1");
  EXPECT_EQ(error_of(R"({"type":"device"})"), "\"device\" is required");
  EXPECT_EQ(error_of(R"({"type":"device","device":1})"), "\"device\" must be a string");
}

TEST(AgentProtocol, AnActionIsTypedAndKeptWhole) {
  const std::string line =
      R"({"type":"action","action":"oom_split","step":120,"summary":"split 32 into 2 x 16",)"
      R"("reason":"oom","batch_size":32,"micro_batch_size":16,"previous_micro_batch_size":32,)"
      R"("evidence":{"requested_bytes":2147483648,"headroom_bytes":123},"later":[1]})";
  const auto a = std::get<Action>(message_of(line));
  EXPECT_EQ(a.action, "oom_split");
  EXPECT_EQ(a.step, 120);
  EXPECT_EQ(a.summary, "split 32 into 2 x 16");
  EXPECT_EQ(a.reason, "oom");
  EXPECT_EQ(a.batch_size, 32);
  EXPECT_EQ(a.micro_batch_size, 16);
  EXPECT_EQ(a.previous_micro_batch_size, 32);
  EXPECT_EQ(a.num_workers, std::nullopt);
  EXPECT_NE(a.json.find(R"("later":[1])"), std::string::npos) << "other fields are kept";
  EXPECT_NE(a.json.find(R"("requested_bytes":2147483648)"), std::string::npos);
  const auto l = std::get<Action>(
      message_of(R"({"type":"action","action":"loader_retuned","epoch":1,"num_workers":4,)"
                 R"("previous_num_workers":0,"prefetch_factor":4,"previous_prefetch_factor":2,)"
                 R"("prefetch_depth":null})"));
  EXPECT_EQ(l.step, std::nullopt);
  EXPECT_EQ(l.epoch, 1);
  EXPECT_EQ(l.num_workers, 4);
  EXPECT_EQ(l.previous_num_workers, 0);
  EXPECT_EQ(l.prefetch_factor, 4);
  EXPECT_EQ(l.previous_prefetch_factor, 2);
  EXPECT_EQ(l.prefetch_depth, std::nullopt);
  const auto m =
      std::get<Action>(message_of(R"({"type":"action","action":"memory_captured","step":900,)"
                                  R"("finding":"memory_leak","summary_file":"/r/m.txt",)"
                                  R"("snapshot_file":"/r/m.pickle","history_pending":true})"));
  EXPECT_EQ(m.finding, "memory_leak");
  EXPECT_EQ(m.summary_file, "/r/m.txt");
  EXPECT_EQ(m.snapshot_file, "/r/m.pickle");
  EXPECT_TRUE(m.history_pending);
  EXPECT_FALSE(l.history_pending);
  EXPECT_EQ(error_of(R"({"type":"action","action":"memory_captured","history_pending":1})"),
            "\"history_pending\" must be true, false or null");
  // The recorded event reads back the same way; another kind or a bad detail is no action.
  const auto e = action_of(rank_event(5, 77, 0, "action", a.json));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->micro_batch_size, 16);
  EXPECT_EQ(e->json, a.json);
  EXPECT_FALSE(action_of(rank_event(5, 77, 0, "oom", a.json)));
  EXPECT_FALSE(action_of(rank_event(5, 77, 0, "action", R"({"action":"Bad Name"})")));
  EXPECT_FALSE(action_of(rank_event(5, 77, 0, "action", "not json")));
}

TEST(AgentProtocol, RefusesAnActionWithABadField) {
  EXPECT_EQ(error_of(R"({"type":"action"})"), "\"action\" is required");
  EXPECT_EQ(error_of(R"({"type":"action","action":""})"), "\"action\" is required");
  EXPECT_EQ(error_of(R"({"type":"action","action":7})"), "\"action\" must be a string");
  EXPECT_EQ(error_of(R"({"type":"action","action":"OOM-split"})"),
            "\"action\" must be at most 64 characters of a-z and _");
  EXPECT_EQ(error_of(R"({"type":"action","action":")" + std::string(65, 'a') + "\"}"),
            "\"action\" must be at most 64 characters of a-z and _");
  EXPECT_TRUE(std::holds_alternative<Action>(
      message_of(R"({"type":"action","action":")" + std::string(64, 'a') + "\"}")));
  EXPECT_EQ(error_of(R"({"type":"action","action":"oom_split","step":-1})"),
            "\"step\" must be >= 0");
  EXPECT_EQ(error_of(R"({"type":"action","action":"oom_split","step":1.5})"),
            "\"step\" must be an integer");
  EXPECT_EQ(error_of(R"({"type":"action","action":"oom_split","summary":3})"),
            "\"summary\" must be a string");
  EXPECT_EQ(error_of(R"({"type":"action","action":"oom_split","reason":[]})"),
            "\"reason\" must be a string");
  EXPECT_EQ(error_of(R"({"type":"action","action":"oom_split","micro_batch_size":"16"})"),
            "\"micro_batch_size\" must be an integer");
  EXPECT_EQ(error_of(R"({"type":"action","action":"loader_retuned","num_workers":2.5})"),
            "\"num_workers\" must be an integer");
  EXPECT_EQ(error_of(R"({"type":"action","action":"oom_split","evidence":[1]})"),
            "\"evidence\" must be an object or null");
}

TEST(AgentProtocol, RefusesMalformedMessages) {
  EXPECT_NE(error_of("not json").find("not JSON"), std::string::npos);
  EXPECT_NE(error_of(R"({"type":"step")").find("not JSON"), std::string::npos);  // cut off
  EXPECT_EQ(error_of("[1,2]"), "not a JSON object");
  EXPECT_EQ(error_of(R"({"step":1})"), "no \"type\"");
  EXPECT_EQ(error_of(R"({"type":"step","t_start":1,"t_end":2,"cpu_step_s":1})"),
            "\"step\" is required");
  EXPECT_EQ(error_of(R"({"type":"step","step":"1","t_start":1,"t_end":2,"cpu_step_s":1})"),
            "\"step\" must be an integer");
  EXPECT_EQ(error_of(R"({"type":"step","step":1.5,"t_start":1,"t_end":2,"cpu_step_s":1})"),
            "\"step\" must be an integer");
  EXPECT_EQ(error_of(R"({"type":"step","step":1,"t_start":3,"t_end":2,"cpu_step_s":1})"),
            "\"t_end\" is before \"t_start\"");
  EXPECT_EQ(error_of(R"({"type":"step","step":1,"t_start":1,"t_end":2,"cpu_step_s":-1})"),
            "\"cpu_step_s\" must be a finite number >= 0");
  EXPECT_EQ(error_of(R"({"type":"step","step":1,"t_start":1,"t_end":2,"cpu_step_s":1,"mem":[]})"),
            "\"mem\" must be an object or null");
  EXPECT_EQ(error_of(R"({"type":"hello"})"), "\"pid\" is required");
  EXPECT_EQ(error_of(R"({"type":"hello","pid":1,"device":3})"), "\"device\" must be a string");
  EXPECT_NE(error_of("{\"type\":\"hello\",\"pid\":1,\"device\":\"\xff\"}").find("not JSON"),
            std::string::npos);  // invalid UTF-8
  const std::string big = R"({"type":"bye","pad":")" + std::string(kMaxMessageBytes, 'x') + "\"}";
  EXPECT_NE(error_of(big).find("longer than"), std::string::npos);
}

}  // namespace
}  // namespace gpumon::training
