// `sbatch` in the CLI: our --dry-run/-o flags, the SlurmJob it prints, the codec behind it,
// and the CRDs and example scripts we ship. The acceptance test holds the SlurmJob for the
// reference's jobs/x.sbatch against `scontrol show job` in ../shared/reference/slurm-22.05.md.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "kubeslurm/api/slurmjob.h"
#include "kubeslurm/cli/commands.h"
#include "tests/unit/api/slurmjob_fixtures.h"

namespace kubeslurm::cli {
namespace {

using api::decodeSlurmJob;
using api::encodeSlurmJob;
using api::SlurmJobObject;
using api::SlurmJobStatus;
using api::testing::richJob;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The repository root (tests/unit/CMakeLists.txt defines it).
std::filesystem::path repoRoot() { return std::filesystem::path(KUBESLURM_SOURCE_DIR); }

std::string readRepoFile(const std::filesystem::path& relative) {
  std::ifstream in(repoRoot() / relative, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The reference's jobs/x.sbatch, as shipped in deploy/examples.
const std::string& refScript() {
  static const std::string kScript = readRepoFile("deploy/examples/x.sbatch");
  return kScript;
}

struct SbatchRun {
  int code = 0;
  std::string out;
  std::string err;
};

// Runs `sbatch ARGS` as a user in /home/alice/jobs whose files are `files`.
SbatchRun sbatch(const std::vector<std::string>& args,
                 std::map<std::string, std::string> files = {},
                 std::map<std::string, std::string> env = {}, const std::string& stdinText = "") {
  if (files.empty()) files["/home/alice/jobs/x.sbatch"] = refScript();
  env.emplace("PWD", "/home/alice/jobs");
  env.emplace("USER", "alice");
  std::istringstream in(stdinText);
  std::ostringstream out;
  std::ostringstream err;
  CliIo io{
      .in = in,
      .out = out,
      .err = err,
      .getenv = [&](std::string_view name) -> std::optional<std::string> {
        auto it = env.find(std::string(name));
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      .readFile = [&](const std::string& path) -> StatusOr<std::string> {
        auto it = files.find(path);
        if (it == files.end()) return notFound("no such file");
        return it->second;
      },
      .now = 1795235712,
      .utcOffsetSeconds = 0,
  };
  SbatchRun run;
  run.code = runSbatch(args, io);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// --- acceptance: the reference script -----------------------------------------------------------

TEST(SbatchDryRun, ReferenceScriptMatchesScontrolShowJob) {
  ASSERT_THAT(refScript(), HasSubstr("#SBATCH --job-name=x"));
  const SbatchRun run = sbatch({"--dry-run=client", "-o", "yaml", "x.sbatch"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.err, "");
  const YAML::Node job = YAML::Load(run.out);
  EXPECT_EQ(job["apiVersion"].as<std::string>(), "kubeslurm.io/v1alpha1");
  EXPECT_EQ(job["kind"].as<std::string>(), "SlurmJob");
  EXPECT_EQ(job["metadata"]["generateName"].as<std::string>(), "x-");
  const YAML::Node spec = job["spec"];
  // slurm-22.05.md "scontrol show job": JobId=2 JobName=x
  EXPECT_EQ(spec["jobName"].as<std::string>(), "x");
  // NumNodes=4 NumTasks=4 NtasksPerN:B:S:C=1:0:*:*
  EXPECT_EQ(spec["nodes"].as<int>(), 4);
  EXPECT_FALSE(spec["maxNodes"]);
  EXPECT_EQ(spec["ntasks"].as<int>(), 4);
  EXPECT_EQ(spec["ntasksPerNode"].as<int>(), 1);
  // TimeLimit=01:00:00
  EXPECT_EQ(spec["timeLimit"].as<std::string>(), "01:00:00");
  // TresPerNode=gres:gpu:8
  EXPECT_EQ("gres:" + spec["gres"].as<std::string>(), "gres:gpu:8");
  // Command=/home/alice/jobs/x.sbatch WorkDir=/home/alice/jobs
  EXPECT_EQ(spec["scriptPath"].as<std::string>(), "/home/alice/jobs/x.sbatch");
  EXPECT_EQ(spec["workDir"].as<std::string>(), "/home/alice/jobs");
  // StdOut=/home/alice/jobs/slurm-2.out (pattern slurm-%j.out), StdErr the same file,
  // StdIn=/dev/null
  EXPECT_EQ(spec["output"].as<std::string>(), "/home/alice/jobs/slurm-%j.out");
  EXPECT_FALSE(spec["error"]);
  EXPECT_EQ(spec["input"].as<std::string>(), "/dev/null");
  // Partition=train and Account come from the defaults at admission: not set by the script.
  EXPECT_FALSE(spec["partition"]);
  EXPECT_FALSE(spec["account"]);
  EXPECT_EQ(spec["user"].as<std::string>(), "alice");
  EXPECT_EQ(spec["script"].as<std::string>(), refScript());
  EXPECT_FALSE(job["status"]);
}

TEST(SbatchDryRun, JsonOutputDecodesToTheSameRequest) {
  const SbatchRun run = sbatch({"--dry-run=client", "--output=json", "x.sbatch"});
  ASSERT_EQ(run.code, 0) << run.err;
  const json object = json::parse(run.out);
  StatusOr<SlurmJobObject> job = decodeSlurmJob(object);
  ASSERT_TRUE(job.isOk()) << job.status().toString();
  EXPECT_EQ(job->request.jobName, "x");
  EXPECT_EQ(job->request.nodes, (slurm::NodeRange{4, std::nullopt}));
  EXPECT_EQ(job->request.timeLimit, slurm::TimeLimit{3600});
  EXPECT_EQ(job->script, refScript());
  EXPECT_EQ(encodeSlurmJob(*job), object);
}

TEST(SbatchDryRun, YamlIsTheDefaultFormat) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--dry-run=client", "x.sbatch"},
        std::vector<std::string>{"--dry-run", "x.sbatch"},
        std::vector<std::string>{"--dry-run=client", "-oyaml", "x.sbatch"},
        std::vector<std::string>{"-o=yaml", "--dry-run=client", "x.sbatch"}}) {
    const SbatchRun run = sbatch(args);
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_EQ(YAML::Load(run.out)["kind"].as<std::string>(), "SlurmJob");
  }
}

// YAML block scalars keep one final newline; other scripts are quoted so that they survive.
TEST(SbatchDryRun, YamlKeepsEveryScriptByteForByte) {
  for (const std::string script :
       {"#!/bin/sh\necho hi\n", "#!/bin/sh\necho hi\n\n\n", "#!/bin/sh\necho hi",
        "#!/bin/sh\n  indented\n\ttab\n", "#!/bin/sh\necho \"caf\xc3\xa9 \xc3\x97 2\"\n",
        "#!/bin/sh\necho '\x1b[1m'\n"}) {
    const SbatchRun run =
        sbatch({"--dry-run=client", "x.sbatch"}, {{"/home/alice/jobs/x.sbatch", script}});
    ASSERT_EQ(run.code, 0) << run.err;
    EXPECT_EQ(YAML::Load(run.out)["spec"]["script"].as<std::string>(), script);
  }
}

// -o is sbatch's --output too: only "yaml"/"json" next to --dry-run mean the print format.
TEST(SbatchDryRun, OtherOutputValuesStaySbatchOutputFile) {
  const SbatchRun run = sbatch({"--dry-run=client", "-o", "train-%j.log", "x.sbatch"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(YAML::Load(run.out)["spec"]["output"].as<std::string>(),
            "/home/alice/jobs/train-%j.log");
  const SbatchRun dotted = sbatch({"--dry-run=client", "-o", "./yaml", "x.sbatch"});
  EXPECT_EQ(YAML::Load(dotted.out)["spec"]["output"].as<std::string>(), "/home/alice/jobs/./yaml");
}

// After the script, words are the script's arguments, ours included.
TEST(SbatchDryRun, FlagsAfterTheScriptAreScriptArguments) {
  const SbatchRun run = sbatch({"--dry-run=client", "x.sbatch", "-o", "json", "--dry-run=server"});
  ASSERT_EQ(run.code, 0) << run.err;
  const YAML::Node spec = YAML::Load(run.out)["spec"];
  EXPECT_EQ(spec["scriptArgs"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"-o", "json", "--dry-run=server"}));
}

// Without --dry-run sbatch submits (sbatch_submit_test.cc); with no kubeconfig and outside a pod
// it says so.
TEST(SbatchDryRun, WithoutDryRunNeedsACluster) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"x.sbatch"}, std::vector<std::string>{"-o", "yaml", "x.sbatch"},
        std::vector<std::string>{"--dry-run=none", "x.sbatch"}}) {
    const SbatchRun run = sbatch(args);
    EXPECT_EQ(run.code, 1);
    EXPECT_EQ(run.out, "");
    EXPECT_THAT(run.err, ::testing::StartsWith("sbatch: error: no kubeconfig ($KUBECONFIG, "
                                               "~/.kube/config or --kubeconfig) and not in a pod"));
  }
  const SbatchRun server = sbatch({"--dry-run=server", "x.sbatch"});
  EXPECT_EQ(server.code, 1);
  EXPECT_EQ(server.err, "sbatch: error: --dry-run=server is not supported: use --dry-run=client\n");
}

TEST(SbatchDryRun, BadDryRunValue) {
  const SbatchRun run = sbatch({"--dry-run=bogus", "x.sbatch"});
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.err,
            "sbatch: error: invalid --dry-run value \"bogus\": must be \"none\", \"server\", or "
            "\"client\"\n");
}

// --- Slurm's messages pass through -------------------------------------------------------------

TEST(SbatchCli, ParseErrorsPrintSlurmLines) {
  SbatchRun run = sbatch({"--dry-run=client", "--bogus", "x.sbatch"});
  EXPECT_EQ(run.code, 255);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(run.err,
            "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n");
  run = sbatch({"--dry-run=client", "-N", "abc", "x.sbatch"});
  EXPECT_EQ(run.code, 255);
  EXPECT_EQ(run.err, "sbatch: error: \"abc\" is not a valid node count\n");
}

TEST(SbatchCli, MissingScriptFile) {
  const SbatchRun run = sbatch({"--dry-run=client", "nope.sh"});
  EXPECT_EQ(run.code, 1);
  EXPECT_EQ(run.err, "sbatch: error: Unable to open file nope.sh\n");
  const SbatchRun custom = sbatch({"--dry-run=client", "nope.sh"}, {}, {{"SLURM_EXIT_ERROR", "9"}});
  EXPECT_EQ(custom.code, 9);
}

TEST(SbatchCli, ScriptFromStandardInputIsNamedSbatch) {
  const SbatchRun run = sbatch({"--dry-run=client", "-N", "2"}, {}, {}, "#!/bin/sh\nhostname\n");
  ASSERT_EQ(run.code, 0) << run.err;
  const YAML::Node spec = YAML::Load(run.out)["spec"];
  EXPECT_EQ(spec["jobName"].as<std::string>(), "sbatch");
  EXPECT_EQ(spec["script"].as<std::string>(), "#!/bin/sh\nhostname\n");
  EXPECT_FALSE(spec["scriptPath"]);
}

TEST(SbatchCli, WrapNeedsNoFile) {
  const SbatchRun run = sbatch({"--dry-run=client", "-o", "json", "--wrap", "echo after", "-J", "b",
                                "--dependency=afterok:9"});
  ASSERT_EQ(run.code, 0) << run.err;
  const json spec = json::parse(run.out)["spec"];
  EXPECT_EQ(spec["jobName"], "b");
  EXPECT_EQ(spec["dependency"], "afterok:9");
  EXPECT_EQ(spec["script"],
            "#!/bin/sh\n# This script was created by sbatch --wrap.\n\necho after\n");
}

TEST(SbatchCli, EnvironmentVariablesApply) {
  const SbatchRun run = sbatch(
      {"--dry-run=client", "-o", "json", "x.sbatch"}, {},
      {{"SBATCH_PARTITION", "debug"}, {"SBATCH_TIMELIMIT", "30"}, {"KUBESLURM_NAMESPACE", "ml"}});
  ASSERT_EQ(run.code, 0) << run.err;
  const json object = json::parse(run.out);
  EXPECT_EQ(object["spec"]["partition"], "debug");
  EXPECT_EQ(object["spec"]["timeLimit"], "00:30:00");
  EXPECT_EQ(object["metadata"]["namespace"], "ml");
}

TEST(SbatchCli, WarnsAboutOptionsWithoutEffect) {
  const SbatchRun run = sbatch({"--dry-run=client", "--reservation=maint", "x.sbatch"});
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.err, "sbatch: warning: --reservation is accepted but has no effect in kubeslurm\n");
}

TEST(SbatchCli, HelpAndVersionGoToStdout) {
  SbatchRun run = sbatch({"--version"});
  EXPECT_EQ(run.code, 0);
  EXPECT_EQ(run.out, "slurm 22.05.8\n");
  run = sbatch({"--help"});
  EXPECT_EQ(run.code, 0);
  EXPECT_THAT(run.out, HasSubstr("--dry-run=client"));
}

// --- CRDs
// ------------------------------------------------------------------------------------------

YAML::Node loadCrd(const std::string& file) {
  return YAML::LoadFile((repoRoot() / "crds" / file).string());
}

YAML::Node versionSchema(const YAML::Node& crd) {
  return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
}

struct CrdCase {
  std::string file;
  std::string kind;
  std::string plural;
  std::string scope;
  std::string shortName;
};

class CrdTest : public ::testing::TestWithParam<CrdCase> {};

TEST_P(CrdTest, IsAV1CrdWithStatusAndColumns) {
  const CrdCase& c = GetParam();
  const YAML::Node crd = loadCrd(c.file);
  EXPECT_EQ(crd["apiVersion"].as<std::string>(), "apiextensions.k8s.io/v1");
  EXPECT_EQ(crd["kind"].as<std::string>(), "CustomResourceDefinition");
  EXPECT_EQ(crd["metadata"]["name"].as<std::string>(), c.plural + ".kubeslurm.io");
  EXPECT_EQ(crd["spec"]["group"].as<std::string>(), "kubeslurm.io");
  EXPECT_EQ(crd["spec"]["scope"].as<std::string>(), c.scope);
  EXPECT_EQ(crd["spec"]["names"]["kind"].as<std::string>(), c.kind);
  EXPECT_EQ(crd["spec"]["names"]["shortNames"][0].as<std::string>(), c.shortName);
  const YAML::Node version = crd["spec"]["versions"][0];
  EXPECT_EQ(version["name"].as<std::string>(), "v1alpha1");
  EXPECT_TRUE(version["served"].as<bool>());
  EXPECT_TRUE(version["storage"].as<bool>());
  EXPECT_TRUE(version["subresources"]["status"].IsMap());
  EXPECT_GE(version["additionalPrinterColumns"].size(), 4U);
  const YAML::Node schema = versionSchema(crd);
  EXPECT_EQ(schema["type"].as<std::string>(), "object");
  EXPECT_TRUE(schema["properties"]["spec"]["properties"].IsMap());
  EXPECT_TRUE(schema["properties"]["status"]["properties"].IsMap());
}

INSTANTIATE_TEST_SUITE_P(Crds, CrdTest,
                         ::testing::Values(CrdCase{"kubeslurm.io_slurmjobs.yaml", "SlurmJob",
                                                   "slurmjobs", "Namespaced", "sj"},
                                           CrdCase{"kubeslurm.io_partitions.yaml", "Partition",
                                                   "partitions", "Cluster", "part"},
                                           CrdCase{"kubeslurm.io_accounts.yaml", "Account",
                                                   "accounts", "Cluster", "acct"}));

// Structural schemas (apiextensions v1): every field has a type (or says it is int-or-string or
// free-form), and a description for `kubectl explain`.
void expectStructural(const YAML::Node& node, const std::string& path) {
  const bool typed = node["type"] || node["x-kubernetes-int-or-string"] ||
                     node["x-kubernetes-preserve-unknown-fields"];
  EXPECT_TRUE(typed) << path << " has no type";
  const bool isItem = path.ends_with("[]") || path.ends_with("{}");
  if (!isItem && !path.ends_with(".metadata")) {
    EXPECT_TRUE(node["description"]) << path << " has no description";
  }
  if (node["properties"]) {
    for (const auto& property : node["properties"]) {
      expectStructural(property.second, path + "." + property.first.as<std::string>());
    }
  }
  if (node["items"]) expectStructural(node["items"], path + "[]");
  if (node["additionalProperties"] && node["additionalProperties"].IsMap()) {
    expectStructural(node["additionalProperties"], path + "{}");
  }
}

TEST_P(CrdTest, SchemaIsStructuralAndDescribed) {
  expectStructural(versionSchema(loadCrd(GetParam().file)), GetParam().kind);
}

TEST(SlurmJobCrd, PrinterColumnsReadLikeSqueue) {
  std::vector<std::string> columns;
  for (const auto& column :
       loadCrd("kubeslurm.io_slurmjobs.yaml")["spec"]["versions"][0]["additionalPrinterColumns"]) {
    if (!column["priority"]) columns.push_back(column["name"].as<std::string>());
  }
  // squeue: JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)
  EXPECT_THAT(columns, ElementsAre("JOBID", "PARTITION", "NAME", "USER", "ST", "TIME", "NODES",
                                   "NODELIST", "REASON", "AGE"));
}

// Every field the codec writes is one the CRD declares, so the API server keeps it.
void expectDeclared(const json& value, const YAML::Node& schema, const std::string& path) {
  if (!value.is_object() || schema["x-kubernetes-preserve-unknown-fields"]) return;
  if (const YAML::Node values = schema["additionalProperties"]; values.IsDefined()) {  // a map
    for (const auto& [key, item] : value.items()) {
      expectDeclared(item, values, std::string(path).append(".").append(key));
    }
    return;
  }
  for (const auto& [key, item] : value.items()) {
    const YAML::Node property = schema["properties"][key];
    EXPECT_TRUE(property.IsDefined() && property.IsMap()) << path << "." << key << " not in CRD";
    if (property.IsDefined() && property.IsMap()) {
      expectDeclared(item, property, std::string(path).append(".").append(key));
    }
  }
}

TEST(SlurmJobCrd, DeclaresEveryFieldTheCodecWrites) {
  const YAML::Node schema = versionSchema(loadCrd("kubeslurm.io_slurmjobs.yaml"));
  json object = encodeSlurmJob(richJob());
  object.erase("metadata");
  expectDeclared(object, schema, "");
  SlurmJobObject other = richJob();
  other.request.shared = slurm::SharedMode::kExclusiveMcs;
  expectDeclared(encodeSlurmJob(other)["spec"], schema["properties"]["spec"], "spec");
  other.request.shared = slurm::SharedMode::kOversubscribe;
  other.request.openMode = slurm::OpenMode::kTruncate;
  expectDeclared(encodeSlurmJob(other)["spec"], schema["properties"]["spec"], "spec");
}

TEST(SlurmJobCrd, StateEnumMatchesStateCodes) {
  const YAML::Node status =
      versionSchema(loadCrd("kubeslurm.io_slurmjobs.yaml"))["properties"]["status"];
  EXPECT_EQ(status["properties"]["state"]["enum"].size(),
            status["properties"]["stateCode"]["enum"].size());
}

// --- examples ------------------------------------------------------------------------------------

TEST(SbatchExamples, ReferenceScriptIsShippedVerbatim) {
  const std::string reference = [] {
    std::ifstream in(repoRoot().parent_path() / "shared/reference/slurm-22.05.md");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }();
  if (reference.empty()) GTEST_SKIP() << "../shared/reference is not beside the checkout";
  const std::size_t start = reference.find("```bash\n") + 8;
  const std::size_t end = reference.find("```", start);
  EXPECT_EQ(refScript(), reference.substr(start, end - start));
}

TEST(SbatchExamples, EveryExampleSubmits) {
  std::size_t seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(repoRoot() / "deploy/examples")) {
    if (entry.path().extension() != ".sbatch") continue;
    ++seen;
    const std::string name = entry.path().filename().string();
    const SbatchRun run =
        sbatch({"--dry-run=client", "-o", "json", name},
               {{"/home/alice/jobs/" + name, readRepoFile("deploy/examples/" + name)}});
    EXPECT_EQ(run.code, 0) << name << ": " << run.err;
    EXPECT_EQ(run.err, "") << name;
    if (run.code == 0) {
      const json object = json::parse(run.out);
      EXPECT_TRUE(decodeSlurmJob(object).isOk()) << name;
      expectDeclared(object["spec"],
                     versionSchema(loadCrd("kubeslurm.io_slurmjobs.yaml"))["properties"]["spec"],
                     name);
    }
  }
  EXPECT_GE(seen, 4U);
}

TEST(SbatchExamples, ArrayExampleUsesThrottle) {
  const std::string name = "array.sbatch";
  const SbatchRun run =
      sbatch({"--dry-run=client", "-o", "json", name},
             {{"/home/alice/jobs/" + name, readRepoFile("deploy/examples/" + name)}});
  ASSERT_EQ(run.code, 0) << run.err;
  const json spec = json::parse(run.out)["spec"];
  EXPECT_EQ(spec["array"], "0-7%2");
  EXPECT_EQ(spec["output"], "/home/alice/jobs/arr-%A_%a.out");
}

}  // namespace
}  // namespace kubeslurm::cli
