// `sacctmgr show account|association` over Account objects, against what Slurm 22.05.8's sacctmgr
// printed for the same accounts, users and limits with slurmdbd on MariaDB: the capture
// tests/integration/slurm_diff/sacctmgr/sacctmgr-22.05.8.txt, made by capture.sh beside it. Each
// case runs ours with the captured command's arguments over the Account objects that mirror the
// capture's database and must print the captured stdout, stderr and exit code byte for byte,
// except where a case says why not.
#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kubeslurm/cli/kube_access.h"
#include "kubeslurm/cli/sacctmgr_format.h"
#include "tests/unit/cli/captured_runs.h"
#include "tests/unit/cli/cli_test_util.h"
#include "tests/unit/cli/fake_cluster.h"

namespace kubeslurm::cli {
namespace {

using nlohmann::json;
using testing::Captured;
using testing::FakeCli;
using testing::FakeCluster;
using testing::loadCapture;

const std::map<std::string, std::vector<Captured>>& captureRuns() {
  static const std::map<std::string, std::vector<Captured>> kCapture =
      loadCapture("tests/integration/slurm_diff/sacctmgr/sacctmgr-22.05.8.txt");
  return kCapture;
}

// A command's first run in the capture, or its last.
const Captured& first(const std::string& command) { return captureRuns().at(command).front(); }
const Captured& last(const std::string& command) { return captureRuns().at(command).back(); }
const Captured& succeeded(const std::string& command) {
  const std::vector<Captured>& runs = captureRuns().at(command);
  return *std::ranges::find_if(runs, [](const Captured& c) { return c.code == 0; });
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

// The captured command line as the shell splits it (double quotes group), less "sacctmgr".
std::vector<std::string> argsOf(const std::string& command) {
  std::vector<std::string> args;
  std::string word;
  bool quoted = false;
  bool any = false;
  for (const char c : command) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any) args.push_back(word);
      word.clear();
      any = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (any) args.push_back(word);
  args.erase(args.begin());
  return args;
}

// Runs ours against `fake` (whose Accounts it may change), `stdinText` as its input.
Captured run(const std::string& command, FakeCluster& fake, const std::string& stdinText = "") {
  FakeCli cli;
  cli.input(stdinText);
  const int code = runSacctmgrWith(argsOf(command), cli.io(), fake.connector());
  return {code, cli.out(), cli.err()};
}

Captured ours(const std::string& command, const std::vector<json>& accounts) {
  FakeCluster fake;
  fake.objects["accounts"] = accounts;
  return run(command, fake);
}

// Ours over the captured accounts against the command's `run`th run in the capture (the last
// when negative).
void expectCaptured(const std::string& command, int run = 0) {
  SCOPED_TRACE(command);
  const auto found = captureRuns().find(command);
  ASSERT_NE(found, captureRuns().end()) << "not in the capture";
  const Captured& want =
      run < 0 ? found->second.back() : found->second.at(static_cast<std::size_t>(run));
  const Captured got = ours(command, capturedAccounts());
  EXPECT_EQ(got.out, want.out);
  EXPECT_EQ(got.err, want.err);
  EXPECT_EQ(got.code, want.code);
}

TEST(Sacctmgr, TheCaptureIsRead) {
  EXPECT_GE(captureRuns().size(), 40U);
  EXPECT_EQ(first("sacctmgr show assoc format=bogus").err, "Unknown field 'bogus'\n");
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
  EXPECT_EQ(got.out, last(command).out);
  EXPECT_EQ(got.code, last(command).code);
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
  const Captured& want = first(command);
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

TEST(Sacctmgr, WhatIsNotShownOrKeptYet) {
  const Captured load = ours("sacctmgr load file=accounts.cfg", capturedAccounts());
  EXPECT_EQ(load.code, 1);
  EXPECT_EQ(load.err,
            "sacctmgr: error: kubeslurm keeps accounts and their associations as "
            "Account objects, not in a database to load, dump, archive or clear\n");
  const Captured qos = ours("sacctmgr show qos", capturedAccounts());
  EXPECT_EQ(qos.code, 1);
  EXPECT_EQ(qos.err,
            "sacctmgr: error: kubeslurm's sacctmgr shows accounts and associations; it "
            "does not show qos yet\n");
  const Captured unknown = ours("sacctmgr show assoc Colour=blue", capturedAccounts());
  EXPECT_EQ(unknown.code, 1);
  EXPECT_EQ(unknown.err, " Unknown condition: Colour=blue\n");
}

// An Account's parent is whatever an admin wrote: a chain of 20,000 accounts is listed without
// exhausting the stack or copying every path, each inheriting the top's MaxJobs.
TEST(Sacctmgr, ADeepTreeIsWalkedOnce) {
  std::vector<api::Account> accounts(20000);
  for (std::size_t i = 0; i < accounts.size(); ++i) {
    accounts[i].metadata.name = "a" + std::to_string(i);
    if (i > 0) accounts[i].spec.parent = "a" + std::to_string(i - 1);
  }
  accounts[0].spec.limits.emplace().maxJobs = 3;
  const SacctmgrParse parse = parseSacctmgrArgs({"-n", "-P", "show", "assoc", "format=acc,maxj"});
  ASSERT_TRUE(parse.request);
  const CommandOutput out = formatSacctmgr(accounts, parse, SacctmgrContext{});
  EXPECT_EQ(std::count(out.out.begin(), out.out.end(), '\n'), 20001);
  EXPECT_TRUE(out.out.ends_with("a19999|3\n")) << out.out.substr(out.out.size() - 40);
}

// An Account that does not decode is left out of the listing, and said so.
TEST(Sacctmgr, AnUnreadableAccountIsLeftOutAndSaidSo) {
  std::vector<json> accounts = capturedAccounts();
  accounts.push_back(json{{"metadata", {{"name", "broken"}}}, {"spec", {{"shares", "many"}}}});
  const Captured got = ours("sacctmgr -n -P show account format=account", accounts);
  EXPECT_EQ(got.out, "infra\nml-team\nroot\nvision\n");
  EXPECT_EQ(got.err.rfind("sacctmgr: warning: Account broken is left out: ", 0), 0U) << got.err;
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

// The Settings an add prints say memory as show does (sacctmgr_print_assoc_limits converts it
// the same way).
TEST(SacctmgrChanges, SettingsSayMemoryInTheLargestExactUnit) {
  FakeCluster fake;
  const Captured got = run("sacctmgr -i add account big GrpTRES=mem=16G,cpu=64", fake);
  EXPECT_EQ(got.code, 0) << got.err;
  EXPECT_NE(got.out.find("  GrpTRES       = cpu=64,mem=16G\n"), std::string::npos) << got.out;
  EXPECT_EQ(fake.objects["accounts"][0]["spec"]["limits"]["grpTres"]["mem"], 16384);
}

constexpr const char* kModifyMlTeam =
    "sacctmgr -i modify account ml-team set GrpTRES=gres/gpu=16,node=4 GrpJobs=10 MaxJobs=5 "
    "MaxSubmitJobs=20 MaxWall=1-00:00:00 MaxTRES=gres/gpu=8 MaxNodes=2 QOS=normal,high "
    "DefaultQOS=normal";

// The capture's whole population, replayed through ours from a cluster with only root: each
// command prints what sacctmgr printed, and the Account objects it leaves list as the capture's
// database does.
TEST(SacctmgrChanges, ThePopulationReplayedMakesTheSameAssociations) {
  FakeCluster fake;
  fake.objects["accounts"] = {capturedAccounts().front()};  // root
  for (const char* command :
       {"sacctmgr -i add account ml-team Description=\"ML team\" Organization=research",
        "sacctmgr -i add account vision parent=ml-team fairshare=2",
        "sacctmgr -i add account infra", kModifyMlTeam,
        "sacctmgr -i add user alice Account=ml-team", "sacctmgr -i add user bob Account=vision",
        "sacctmgr -i add user alice Account=infra", "sacctmgr -i add user carol Account=infra"}) {
    SCOPED_TRACE(command);
    // The modify failed once before it worked (no gres/gpu TRES yet), and `add account infra`
    // was tried again later: the run that worked is the one.
    const Captured got = run(command, fake);
    EXPECT_EQ(got.out, succeeded(command).out);
    EXPECT_EQ(got.err, succeeded(command).err);
    EXPECT_EQ(got.code, 0) << got.err;
  }
  for (const char* command : {"sacctmgr show assoc", "sacctmgr -P show account"}) {
    SCOPED_TRACE(command);
    EXPECT_EQ(run(command, fake).out,
              command == std::string("sacctmgr show assoc")
                  ? first(command).out
                  : "Account|Descr|Org\ninfra|infra|infra\nml-team|ml team|research\n"
                    "root|default root account|root\nvision|vision|ml-team\n");
  }
}

TEST(SacctmgrChanges, RefusalsAsTheCaptureSaysThem) {
  for (const char* command :
       {"sacctmgr -i add account infra", "sacctmgr -i add user dave Account=nosuch",
        "sacctmgr -i delete account nosuch"}) {
    expectCaptured(command, -1);
  }
}

TEST(SacctmgrChanges, TheQuestionAndItsAnswers) {
  FakeCluster fake;
  fake.objects["accounts"] = capturedAccounts();
  const std::string no = "echo n | sacctmgr add account tmp1";
  Captured got = run("sacctmgr add account tmp1", fake, "n\n");
  EXPECT_EQ(got.out, first(no).out);
  EXPECT_EQ(got.code, 0);
  EXPECT_EQ(fake.objects["accounts"].size(), capturedAccounts().size()) << "discarded";

  const std::string yes = "echo y | sacctmgr add account tmp2";
  got = run("sacctmgr add account tmp2", fake, "y\n");
  EXPECT_EQ(got.out, first(yes).out);
  EXPECT_EQ(fake.objects["accounts"].back()["metadata"]["name"], "tmp2");

  const std::string remove = "echo y | sacctmgr delete account tmp2";
  got = run("sacctmgr delete account tmp2", fake, "y\n");
  EXPECT_EQ(got.out, first(remove).out);
  EXPECT_EQ(fake.deleted, std::vector<std::string>{"/tmp2"});

  // No answer at all (the input ends) is no.
  got = run("sacctmgr add account tmp3", fake, "");
  EXPECT_NE(got.out.find(" Changes Discarded\n"), std::string::npos) << got.out;
}

TEST(SacctmgrChanges, AccountFieldsAndQosChanges) {
  FakeCluster fake;
  fake.objects["accounts"] = capturedAccounts();
  for (const char* command : {"sacctmgr -i modify account infra set description=Infra",
                              "sacctmgr -i modify account infra set Organization=Ops"}) {
    SCOPED_TRACE(command);
    const Captured got = run(command, fake);
    EXPECT_EQ(got.out, first(command).out);
    EXPECT_EQ(got.code, 0);
  }
  EXPECT_EQ(run("sacctmgr -n -P show account infra", fake).out, "infra|infra|ops\n");
  // QOS+= and QOS-= change the list as it is; -1 clears a limit.
  EXPECT_EQ(
      run("sacctmgr -i modify account where name=ml-team set QOS+=low QOS-=high MaxJobs=-1", fake)
          .code,
      0);
  EXPECT_EQ(run("sacctmgr -n -P show assoc account=ml-team format=user,qos,maxjobs", fake).out,
            "|low,normal|\nalice|low,normal|\n");
}

TEST(SacctmgrChanges, WhatKubeslurmRefusesAndWhy) {
  FakeCluster fake;
  fake.objects["accounts"] = capturedAccounts();
  // slurmdbd deleted ml-team with vision's associations (captured); an Account whose parent
  // is gone would move under root, so kubeslurm refuses until the sub-accounts go first.
  Captured got = run("sacctmgr -i delete account ml-team", fake);
  EXPECT_EQ(got.code, 1);
  EXPECT_EQ(got.err,
            " Error with request: account ml-team still has sub-accounts (vision): delete or "
            "move them first\n");
  EXPECT_TRUE(fake.deleted.empty());
  got = run("sacctmgr -i delete account root", fake);
  EXPECT_EQ(got.err,
            " You are not allowed to remove the root account.\n Use remove cluster "
            "instead.\n");
  got = run("sacctmgr -i modify account ml-team set parent=vision", fake);
  EXPECT_EQ(got.code, 1);
  EXPECT_EQ(got.err,
            " Can't move account ml-team under vision, which is one of its own "
            "sub-accounts.\n");
  got = run("sacctmgr -i modify account ml-team set GrpTRES=license/x=1", fake);
  EXPECT_EQ(got.err,
            "sacctmgr: error: slurmdb_format_tres_str: no TRES known by type license/x\n"
            " Unknown option: GrpTRES=license/x=1\n Use keyword 'where' to modify condition\n");
  got = run("sacctmgr -i modify account ml-team set GrpJobs=lots", fake);
  EXPECT_EQ(got.err,
            "sacctmgr: error: Invalid value for GrpJobs (lots)\n"
            " Unknown option: GrpJobs=lots\n Use keyword 'where' to modify condition\n");
  EXPECT_TRUE(fake.patches.empty());
  // The API server's answer (RBAC) is the last word.
  fake.patchError =
      Status(StatusCode::kPermissionDenied, "accounts.kubeslurm.io \"infra\" is forbidden");
  got = run("sacctmgr -i modify account infra set fairshare=3", fake);
  EXPECT_EQ(got.code, 1);
  EXPECT_EQ(got.err, " Error with request: infra: accounts.kubeslurm.io \"infra\" is forbidden\n");
}

// A list patch that meets a newer object (the operator's status write) is planned again from a
// fresh read, once the change is said; what another admin added meanwhile is kept.
TEST(SacctmgrChanges, AConflictIsReadAgainNotLost) {
  FakeCluster fake;
  fake.objects["accounts"] = capturedAccounts();
  fake.objects["accounts"].back()["metadata"]["resourceVersion"] = "7";  // infra
  fake.patchError = Status(StatusCode::kAborted, "the object has been modified");
  fake.patchErrors = 1;
  const Captured got = run("sacctmgr -i add user dana Account=infra", fake);
  EXPECT_EQ(got.code, 0) << got.err;
  EXPECT_EQ(got.out,
            " Adding User(s)\n  dana\n Associations =\n  U = dana      A = infra      C = "
            "kubeslurm \n Non Default Settings\n");
  ASSERT_EQ(fake.patches.size(), 1U);
  EXPECT_EQ(fake.patches[0].body["spec"]["users"], json({"carol", "alice", "dana"}));
  EXPECT_EQ(fake.patches[0].body["metadata"]["resourceVersion"], "7");
  // Scalar settings carry no precondition: nothing of theirs can be lost.
  run("sacctmgr -i modify account infra set fairshare=4", fake);
  EXPECT_FALSE(fake.patches.back().body.contains("metadata"));
}

}  // namespace
}  // namespace kubeslurm::cli
