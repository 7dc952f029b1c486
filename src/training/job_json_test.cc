// SPDX-License-Identifier: MIT
// A job in JSON and back, and a hostile hello's job: values that are not job values are dropped.
#include "training/job_json.h"

#include <gtest/gtest.h>

#include "training/protocol.h"

namespace gpumon::training {
namespace {

using nlohmann::json;

TEST(JobJson, RoundTripWritesOnlyKnownFields) {
  job::JobIdentity j;
  j.id = "4711";
  j.id_source = "slurm";
  j.slurm_job_id = "4711";
  j.pod_namespace = "team-a";
  const json o = job_json(j);
  EXPECT_EQ(o, json::parse(R"({"id":"4711","id_source":"slurm","slurm_job_id":"4711",
                               "namespace":"team-a"})"));
  EXPECT_EQ(job_from_json(o), j);
  EXPECT_TRUE(job_json(job::JobIdentity{}).is_null());
}

TEST(JobJson, HostileFieldsAreDropped) {
  const job::JobIdentity j = job_from_json(json::parse(
      R"({"id":"a\"} 1\n","pod":7,"namespace":["x"],"slurm_job_id":"12","extra":"ignored"})"));
  EXPECT_EQ(j.id, "");
  EXPECT_EQ(j.pod, "");
  EXPECT_EQ(j.pod_namespace, "");
  EXPECT_EQ(j.slurm_job_id, "12");
  EXPECT_TRUE(job_from_json(json("not an object")).empty());
}

TEST(JobJson, HelloCarriesTheJob) {
  const auto m = parse_message(R"({"type":"hello","v":1,"pid":42,"rank":0,)"
                               R"("job":{"id":"run-7","id_source":"torchelastic"}})");
  ASSERT_TRUE(std::holds_alternative<Message>(m));
  const Hello* h = std::get_if<Hello>(&std::get<Message>(m));
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->job.id, "run-7");
  EXPECT_EQ(h->job.id_source, "torchelastic");
  // An older client sends none: the job is empty, the hello still parses.
  const auto old = parse_message(R"({"type":"hello","v":1,"pid":42})");
  ASSERT_TRUE(std::holds_alternative<Message>(old));
  const Hello* oh = std::get_if<Hello>(&std::get<Message>(old));
  ASSERT_NE(oh, nullptr);
  EXPECT_TRUE(oh->job.empty());
}

}  // namespace
}  // namespace gpumon::training
