// `sacctmgr show account|association` over Account objects, against what Slurm 22.05.8's sacctmgr
// printed for the same accounts, users and limits with slurmdbd on MariaDB: the capture
// tests/integration/slurm_diff/sacctmgr/sacctmgr-22.05.8.txt, made by capture.sh beside it. Each
// case runs ours with the captured command's arguments over the Account objects that mirror the
// capture's database and must print the captured stdout, stderr and exit code byte for byte,
// except where a case says why not.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sacctmgr_format.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::FakeCli;
using testing::FakeCluster;

struct Captured {
  int code = 0;
  std::string out;
  std::string err;
};

// The capture's "### <command> (rc=N)" sections: stdout, then "--- stderr", then stderr, then
// one blank line. A command run twice (before and after a change) keeps its first section.
std::map<std::string, Captured> loadCapture() {
  std::ifstream file(std::string(KUBESLURM_SOURCE_DIR) +
                     "/tests/integration/slurm_diff/sacctmgr/sacctmgr-22.05.8.txt");
  std::map<std::string, Captured> sections;
  std::string line;
  std::string command;
  Captured current;
  bool inErr = false;
  const auto finish = [&] {
    if (command.empty()) return;
    // The blank line that ends a section is the capture's, not the command's.
    std::string& last = inErr ? current.err : current.out;
    if (!last.empty() && last.back() == '\n') last.pop_back();
    sections.try_emplace(command, current);
    command.clear();
  };
  while (std::getline(file, line)) {
    if (line.rfind("### ", 0) == 0) {
      finish();
      const std::size_t rc = line.rfind(" (rc=");
      command = line.substr(4, rc - 4);
      current = Captured{std::stoi(line.substr(rc + 5)), "", ""};
      inErr = false;
    } else if (line.rfind("######## ", 0) == 0) {
      finish();
    } else if (!command.empty() && line == "--- stderr") {
      inErr = true;
    } else if (!command.empty()) {
      (inErr ? current.err : current.out) += line + "\n";
    }
  }
  finish();
  return sections;
}

const std::map<std::string, Captured>& capture() {
  static const std::map<std::string, Captured> kCapture = loadCapture();
  return kCapture;
}

// The capture's database as Account objects. root is an Account too, as an admin who wants
// Slurm's defaults writes it: QOS normal for everyone below, and the root user's association.
// sacctmgr lower-cases a Description= it is given ("ML team" is stored "ml team").
std::vector<json> capturedAccounts() {
  return {
      json{{"metadata", {{"name", "root"}}},
           {"spec", {{"users", {"root"}}, {"allowedQos", {"normal"}}}}},
      json{{"metadata", {{"name", "ml-team"}}},
           {"spec",
            {{"description", "ml team"},
             {"organization", "research"},
             {"users", {"alice"}},
             {"allowedQos", {"normal", "high"}},
             {"defaultQos", "normal"},
             {"limits",
              {{"grpTres", {{"gres/gpu", 16}, {"node", 4}}},
               {"grpJobs", 10},
               {"maxJobs", 5},
               {"maxSubmitJobs", 20},
               {"maxWallDurationPerJob", "1-00:00:00"},
               {"maxTresPerJob", {{"gres/gpu", 8}}},
               {"maxNodesPerJob", 2}}}}}},
      json{{"metadata", {{"name", "vision"}}},
           {"spec", {{"parent", "ml-team"}, {"shares", 2}, {"users", {"bob"}}}}},
      json{{"metadata", {{"name", "infra"}}}, {"spec", {{"users", {"carol", "alice"}}}}},
  };
}

Captured ours(const std::string& command, const std::vector<json>& accounts) {
  std::vector<std::string> args;
  std::istringstream words(command);
  std::string word;
  words >> word;  // "sacctmgr"
  while (words >> word) args.push_back(word);
  FakeCluster fake;
  fake.objects["accounts"] = accounts;
  FakeCli cli;
  const int code = runSacctmgrWith(args, cli.io(), fake.connector());
  return {code, cli.out(), cli.err()};
}

void expectCaptured(const std::string& command) {
  SCOPED_TRACE(command);
  const auto found = capture().find(command);
  ASSERT_NE(found, capture().end()) << "not in the capture";
  const Captured got = ours(command, capturedAccounts());
  EXPECT_EQ(got.out, found->second.out);
  EXPECT_EQ(got.err, found->second.err);
  EXPECT_EQ(got.code, found->second.code);
}

TEST(Sacctmgr, TheCaptureIsRead) {
  EXPECT_GE(capture().size(), 40U);
  EXPECT_EQ(capture().at("sacctmgr show assoc format=bogus").err, "Unknown field 'bogus'\n");
}

TEST(Sacctmgr, AccountsAsTheCapturePrintsThem) {
  for (const char* command :
       {"sacctmgr show account", "sacctmgr -n show account", "sacctmgr -p show account",
        "sacctmgr -P show account", "sacctmgr show account ml-team",
        "sacctmgr show account format=account%20,descr,org", "sacctmgr show account nosuch"}) {
    expectCaptured(command);
  }
}

TEST(Sacctmgr, AssociationsAsTheCapturePrintsThem) {
  for (const char* command :
       {"sacctmgr show assoc", "sacctmgr show assoc tree", "sacctmgr -P show assoc",
        "sacctmgr show assoc format=cluster,account,user,share,grptres,maxjobs,qos,defaultqos",
        "sacctmgr show assoc where account=ml-team", "sacctmgr show assoc users=alice",
        "sacctmgr show assoc format=account%-8,user%3"}) {
    expectCaptured(command);
  }
}

// Captured after `sacctmgr delete account ml-team`, which took vision's and bob's associations
// with it: here, the cluster without those Account objects.
TEST(Sacctmgr, AfterATeamIsDeleted) {
  const std::string command = "sacctmgr -n -P show assoc format=account,user";
  std::vector<json> left;
  for (const json& account : capturedAccounts()) {
    const std::string name = account["metadata"]["name"];
    if (name != "ml-team" && name != "vision") left.push_back(account);
  }
  const Captured got = ours(command, left);
  EXPECT_EQ(got.out, capture().at(command).out);
  EXPECT_EQ(got.code, capture().at(command).code);
}

TEST(Sacctmgr, ComplaintsAsTheCaptureSaysThem) {
  for (const char* command : {"sacctmgr show assoc format=bogus", "sacctmgr show bogus",
                              "sacctmgr bogus", "sacctmgr show", "sacctmgr --version"}) {
    expectCaptured(command);
  }
}

// slurmdbd lists an account's associations for WithAssoc in its own storage order (carol before
// alice under infra, though alice was added first); ours lists users by name, as `show assoc`
// does. The lines are the same.
TEST(Sacctmgr, WithAssocHasTheCapturesLines) {
  const std::string command = "sacctmgr show account withassoc";
  const Captured got = ours(command, capturedAccounts());
  const Captured& want = capture().at(command);
  const auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    std::ranges::sort(out);
    return out;
  };
  EXPECT_EQ(lines(got.out), lines(want.out));
  EXPECT_NE(got.out, want.out) << "slurmdbd's order is ours now: fold this case into the others";
}

// What an Account object does not say is sacctmgr's default: a description is the account's
// name, an organization its parent's (its own under root), root "default root account"; no QOS
// anywhere leaves the QOS columns blank (kubeslurm then allows any QOS; Slurm's root has normal).
TEST(Sacctmgr, DefaultsOfAnAccountThatSaysLittle) {
  const std::vector<json> accounts = {
      json{{"metadata", {{"name", "team"}}}, {"spec", {{"users", {"dana"}}}}},
      json{{"metadata", {{"name", "sub"}}}, {"spec", {{"parent", "team"}}}},
      json{{"metadata", {{"name", "lost"}}}, {"spec", {{"parent", "nowhere"}}}},
  };
  const Captured accountsOut = ours("sacctmgr -P show account", accounts);
  EXPECT_EQ(accountsOut.out,
            "Account|Descr|Org\n"
            "lost|lost|lost\n"
            "root|default root account|root\n"
            "sub|sub|team\n"
            "team|team|team\n");
  const Captured assocOut =
      ours("sacctmgr -P show assoc tree format=account,user,parentname,share,qos", accounts);
  EXPECT_EQ(assocOut.out,
            "Account|User|ParentName|Share|QOS\n"
            "root|||1|\n"
            " lost||root|1|\n"
            " team||root|1|\n"
            "  team|dana||1|\n"
            "  sub||team|1|\n");
}

TEST(Sacctmgr, ChangesAreKubectlsAndOtherEntitiesAreNotShownYet) {
  const Captured add = ours("sacctmgr add account tmp1", capturedAccounts());
  EXPECT_EQ(add.code, 1);
  EXPECT_NE(add.err.find("kubectl"), std::string::npos) << add.err;
  const Captured qos = ours("sacctmgr show qos", capturedAccounts());
  EXPECT_EQ(qos.code, 1);
  EXPECT_EQ(qos.err,
            "sacctmgr: error: kubeslurm's sacctmgr shows accounts and associations; it "
            "does not show qos yet\n");
  const Captured unknown = ours("sacctmgr show assoc Colour=blue", capturedAccounts());
  EXPECT_EQ(unknown.code, 1);
  EXPECT_EQ(unknown.err, " Unknown condition: Colour=blue\n");
}

TEST(Sacctmgr, MemoryLimitsInTheLargestExactUnit) {
  json big;
  big["metadata"]["name"] = "big";
  big["spec"]["limits"]["grpTres"] = {{"mem", 16384}, {"cpu", 64}};
  big["spec"]["limits"]["grpJobs"] = -1;
  const Captured out =
      ours("sacctmgr -n -P show assoc account=big format=grptres,grpjobs,grpmem", {big});
  EXPECT_EQ(out.out, "cpu=64,mem=16G||16384\n") << out.err;
}

}  // namespace
}  // namespace kubeslurm::cli
