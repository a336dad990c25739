// Which verbs layer, device, port and GID net/ib uses (LoadVerbs,
// ChoosePort), whether a process could use net/ib at all (IbUsable), and
// making the transport (CreateIbTransport).
#include <dlfcn.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "net/ib/ib_transport.h"
#include "net/ib/ib_transport_internal.h"

namespace minimpi::net::ib {
namespace {

bool IsIpv4Mapped(const ibv_gid& gid) {
  static const uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(gid.raw, kPrefix, sizeof(kPrefix)) == 0;
}

bool IsZero(const ibv_gid& gid) {
  for (uint8_t byte : gid.raw) {
    if (byte != 0) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Verbs>> LoadVerbs(
    const runtime::Settings& settings) {
  if (settings.ib_test_device.empty()) return CreateDeviceVerbs();
  // Loaded once and never unloaded: the verbs object's code lives there.
  void* library =
      dlopen(settings.ib_test_device.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("net/ib: MINIMPI_IB_TEST_DEVICE=", settings.ib_test_device,
                     " cannot be loaded: ", dlerror()));
  }
  auto factory = reinterpret_cast<TestDeviceFactory>(
      dlsym(library, kTestDeviceFactorySymbol));
  if (factory == nullptr) {
    return absl::NotFoundError(absl::StrCat("net/ib: ", settings.ib_test_device,
                                            " has no ",
                                            kTestDeviceFactorySymbol));
  }
  return std::unique_ptr<Verbs>(factory());
}

absl::StatusOr<PortChoice> ChoosePort(Verbs& verbs,
                                      const runtime::Settings& settings) {
  const std::vector<std::string> devices = verbs.ListDevices();
  if (devices.empty()) {
    return absl::NotFoundError(absl::StrCat("net/ib: no RDMA device (",
                                            verbs.provider(), " lists none)"));
  }
  std::vector<std::string> candidates = devices;
  if (!settings.ib_device.empty()) {
    if (std::find(devices.begin(), devices.end(), settings.ib_device) ==
        devices.end()) {
      return absl::NotFoundError(absl::StrCat(
          "net/ib: MINIMPI_IB_DEVICE=", settings.ib_device,
          " does not exist (devices: ", absl::StrJoin(devices, ", "), ")"));
    }
    candidates = {settings.ib_device};
  }
  std::vector<std::string> problems;
  for (const std::string& name : candidates) {
    VerbsContext* context = verbs.OpenDevice(name);
    if (context == nullptr) {
      problems.push_back(
          absl::StrCat(name, " cannot be opened: ", std::strerror(errno)));
      continue;
    }
    ibv_device_attr device{};
    if (verbs.QueryDevice(context, &device) != 0) {
      problems.push_back(absl::StrCat(name, ": ibv_query_device failed"));
      verbs.CloseDevice(context);
      continue;
    }
    const int first = settings.ib_port > 0 ? settings.ib_port : 1;
    const int last =
        settings.ib_port > 0 ? settings.ib_port : device.phys_port_cnt;
    for (int port = first; port <= last; ++port) {
      ibv_port_attr attr{};
      if (verbs.QueryPort(context, static_cast<uint8_t>(port), &attr) != 0) {
        problems.push_back(absl::StrCat(name, " has no port ", port));
        continue;
      }
      if (attr.state != IBV_PORT_ACTIVE) {
        problems.push_back(
            absl::StrCat(name, " port ", port, " is not active"));
        continue;
      }
      PortChoice choice;
      choice.device = name;
      choice.port = static_cast<uint8_t>(port);
      choice.ethernet = attr.link_layer == IBV_LINK_LAYER_ETHERNET;
      choice.lid = attr.lid;
      choice.mtu = attr.active_mtu;
      // GIDs: RoCE needs one; InfiniBand uses LIDs (one subnet).
      int best = -1, best_rank = -1;
      ibv_gid best_gid{};
      for (int index = 0; index < attr.gid_tbl_len; ++index) {
        ibv_gid_entry entry{};
        if (verbs.QueryGid(context, static_cast<uint8_t>(port),
                           static_cast<uint32_t>(index), &entry) != 0) {
          continue;
        }
        ibv_gid gid;
        std::memcpy(gid.raw, &entry.gid, sizeof(gid.raw));
        if (IsZero(gid)) continue;
        if (settings.ib_gid_index >= 0) {
          if (index != settings.ib_gid_index) continue;
          best = index;
          best_gid = gid;
          break;
        }
        const bool v2 = entry.gid_type == IBV_GID_TYPE_ROCE_V2;
        const int rank = (v2 ? 2 : 0) + (IsIpv4Mapped(gid) ? 1 : 0);
        if (rank > best_rank) {
          best = index;
          best_rank = rank;
          best_gid = gid;
        }
      }
      if (settings.ib_gid_index >= 0 && best < 0) {
        problems.push_back(absl::StrCat(name, " port ", port,
                                        " has no valid GID at "
                                        "MINIMPI_IB_GID_INDEX=",
                                        settings.ib_gid_index));
        continue;
      }
      if (choice.ethernet && best < 0) {
        problems.push_back(absl::StrCat(name, " port ", port,
                                        " is Ethernet (RoCE) but has no GID"));
        continue;
      }
      if (!choice.ethernet && choice.lid == 0) {
        problems.push_back(absl::StrCat(name, " port ", port,
                                        " has no LID (no subnet manager?)"));
        continue;
      }
      if (choice.ethernet || settings.ib_gid_index >= 0) {
        choice.gid_index = best;
        choice.gid = best_gid;
      }
      verbs.CloseDevice(context);
      return choice;
    }
    verbs.CloseDevice(context);
  }
  return absl::NotFoundError(absl::StrCat("net/ib: no usable RDMA port: ",
                                          absl::StrJoin(problems, "; ")));
}

bool IbUsable(const runtime::Settings& settings, std::string* why) {
  absl::StatusOr<std::unique_ptr<Verbs>> verbs = LoadVerbs(settings);
  if (!verbs.ok()) {
    *why = std::string(verbs.status().message());
    return false;
  }
  absl::StatusOr<PortChoice> port = ChoosePort(**verbs, settings);
  if (!port.ok()) {
    *why = std::string(port.status().message());
    return false;
  }
  return true;
}

absl::StatusOr<std::unique_ptr<Transport>> CreateIbTransport(
    runtime::Bootstrap& bootstrap, const runtime::Settings& settings) {
  absl::StatusOr<std::unique_ptr<Verbs>> verbs = LoadVerbs(settings);
  if (!verbs.ok()) return verbs.status();
  absl::StatusOr<std::unique_ptr<IbTransport>> transport =
      IbTransport::Create(bootstrap, settings, *std::move(verbs));
  if (!transport.ok()) return transport.status();
  return std::unique_ptr<Transport>(*std::move(transport));
}

}  // namespace minimpi::net::ib
