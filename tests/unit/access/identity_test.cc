// Slurm user names for Kubernetes identities (kubeslurm/access/identity.h).
#include "kubeslurm/access/identity.h"

#include <gtest/gtest.h>

namespace kubeslurm::access {
namespace {

TEST(SlurmUserName, ShortNamesOfTheIdentitiesClustersHave) {
  struct Row {
    std::string_view username;
    std::string_view shortName;
  };
  const Row rows[] = {
      {"alice", "alice"},
      {"system:serviceaccount:team-a:trainer", "trainer"},  // a ServiceAccount's name
      {"oidc:alice@example.com", "alice"},                  // an OIDC user, prefixed
      {"alice@example.com", "alice"},
      {"https://issuer.example#bob", "bob"},  // OIDC: issuer#subject
      {"kubernetes-admin", "kubernetes-admin"},
      {"", "nobody"},
      {"system:serviceaccount:x:", "nobody"},
      {"j\xc3\xbcrgen", "j__rgen"},  // not a POSIX name: replaced, not dropped
  };
  for (const Row& row : rows) EXPECT_EQ(slurmUserName(row.username), row.shortName) << row.username;
  EXPECT_EQ(slurmUserName(std::string(100, 'a')).size(), 64U);
}

}  // namespace
}  // namespace kubeslurm::access
