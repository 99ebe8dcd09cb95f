#include "kubeslurm/inpod/agent_address.h"

#include <algorithm>
#include <array>
#include <memory>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

namespace kubeslurm::inpod {
namespace {

constexpr std::chrono::milliseconds kRetryInterval{200};

struct AddrinfoFree {
  void operator()(addrinfo* list) const { freeaddrinfo(list); }
};

// The address of one getaddrinfo result as gRPC's ipv4:/ipv6: URI schemes write it.
std::string targetAddress(const addrinfo& entry, std::string_view port) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (entry.ai_family == AF_INET) {
    const auto* address = reinterpret_cast<const sockaddr_in*>(entry.ai_addr);  // NOLINT
    inet_ntop(AF_INET, &address->sin_addr, text.data(), text.size());
    return std::string(text.data()) + ":" + std::string(port);
  }
  const auto* address = reinterpret_cast<const sockaddr_in6*>(entry.ai_addr);  // NOLINT
  inet_ntop(AF_INET6, &address->sin6_addr, text.data(), text.size());
  return "[" + std::string(text.data()) + "]:" + std::string(port);
}

}  // namespace

StatusOr<std::string> resolveAgentAddress(std::string_view hostPort,
                                          std::chrono::steady_clock::time_point deadline) {
  const std::size_t colon = hostPort.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == hostPort.size()) {
    return invalidArgument("agent address \"" + std::string(hostPort) + "\" is not HOST:PORT");
  }
  std::string_view host = hostPort.substr(0, colon);
  const std::string port(hostPort.substr(colon + 1));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  const std::string name(host);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  while (true) {
    addrinfo* found = nullptr;
    const int error = getaddrinfo(name.c_str(), port.c_str(), &hints, &found);
    const std::unique_ptr<addrinfo, AddrinfoFree> list(found);
    if (error == 0) {
      // gRPC takes one scheme per target: the family of getaddrinfo's first answer (RFC 6724's
      // preference), every address of it.
      int family = AF_UNSPEC;
      std::vector<std::string> addresses;  // getaddrinfo repeats an address per protocol
      for (const addrinfo* entry = list.get(); entry != nullptr; entry = entry->ai_next) {
        if (entry->ai_family != AF_INET && entry->ai_family != AF_INET6) continue;
        if (family == AF_UNSPEC) family = entry->ai_family;
        if (entry->ai_family != family) continue;
        std::string address = targetAddress(*entry, port);
        if (std::ranges::find(addresses, address) == addresses.end()) {
          addresses.push_back(std::move(address));
        }
      }
      if (family != AF_UNSPEC) {
        std::string target = family == AF_INET ? "ipv4:" : "ipv6:";
        for (std::size_t i = 0; i < addresses.size(); ++i) {
          target += (i == 0 ? "" : ",") + addresses[i];
        }
        return target;
      }
    }
    const bool retry = error == EAI_AGAIN || error == EAI_NONAME || error == 0;
    if (!retry || std::chrono::steady_clock::now() + kRetryInterval >= deadline) {
      return notFound("Unable to resolve \"" + name +
                      "\": " + (error == 0 ? "no IPv4 or IPv6 address" : gai_strerror(error)));
    }
    std::this_thread::sleep_for(kRetryInterval);
  }
}

}  // namespace kubeslurm::inpod
