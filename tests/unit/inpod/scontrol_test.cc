#include "kubeslurm/inpod/scontrol.h"

#include <sstream>

#include <gtest/gtest.h>

namespace kubeslurm::inpod {
namespace {

struct Scontrolled {
  std::optional<int> code;
  std::string out;
  std::string err;
};

Scontrolled runScontrol(const std::vector<std::string>& args,
                        std::optional<std::string> nodeList = "e2e-[0-1]") {
  std::ostringstream out;
  std::ostringstream err;
  ScontrolIo io{
      .out = out,
      .err = err,
      .getenv = [&](std::string_view name) -> std::optional<std::string> {
        if (name == "SLURM_NODELIST") return nodeList;
        return std::nullopt;
      },
      .readFile = [](const std::string& path) -> StatusOr<std::string> {
        if (path == "/hosts") return std::string("b1\na1\n\na2\n");
        return notFound("no " + path);
      },
  };
  Scontrolled result;
  result.code = runOfflineScontrol(args, io);
  result.out = out.str();
  result.err = err.str();
  return result;
}

TEST(InPodScontrolTest, ShowsHostnamesOfTheJobOrOfTheGivenList) {
  EXPECT_EQ(runScontrol({"show", "hostnames"}).out, "e2e-0\ne2e-1\n");
  EXPECT_EQ(runScontrol({"show", "hostnames", "n[3-4]"}).out, "n3\nn4\n");
  // scontrol's abbreviations and TAG=VALUE form.
  EXPECT_EQ(runScontrol({"sho", "hostname=n[1-2]"}).out, "n1\nn2\n");
  EXPECT_EQ(runScontrol({"SHOW", "HOSTN"}).out, "e2e-0\ne2e-1\n");
  const Scontrolled empty = runScontrol({"show", "hostnames"}, std::nullopt);
  EXPECT_EQ(empty.code, 0);
  EXPECT_EQ(empty.err, "scontrol: error: host list is empty\n");
}

TEST(InPodScontrolTest, CompressesListsAndFiles) {
  EXPECT_EQ(runScontrol({"show", "hostlist", "n2,n1,n3"}).out, "n[2,1,3]\n");
  EXPECT_EQ(runScontrol({"show", "hostlistsorted", "n2,n1,n3"}).out, "n[1-3]\n");
  EXPECT_EQ(runScontrol({"show", "hostlists", "/hosts"}).out, "a[1-2],b1\n");
  const Scontrolled missing = runScontrol({"show", "hostlist", "/nowhere"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_EQ(missing.err, "Can not open /nowhere\n");
  const Scontrolled noList = runScontrol({"show", "hostlist"});
  EXPECT_EQ(noList.code, 1);
  EXPECT_EQ(noList.err, "invalid encode argument\n");
}

TEST(InPodScontrolTest, LeavesEverythingElseToTheFullScontrol) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"show", "job", "42"},
                                             {"-o", "show", "hostnames"},
                                             {"sh", "hostnames"},
                                             {"show", "host"},
                                             {"show", "hostnames", "a", "b"},
                                             {"requeue", "42"},
                                             {}}) {
    const Scontrolled result = runScontrol(args);
    EXPECT_FALSE(result.code.has_value()) << (args.empty() ? "" : args[0]);
    EXPECT_EQ(result.out, "");
  }
}

}  // namespace
}  // namespace kubeslurm::inpod
