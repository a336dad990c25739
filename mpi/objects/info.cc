#include "mpi/objects/info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace minimpi {

int Info::CheckKey(const char* key, std::string* problem) {
  if (key == nullptr) {
    *problem = "null key";
    return MPI_ERR_INFO_KEY;
  }
  const size_t length = std::strlen(key);
  if (length == 0) {
    *problem = "empty key";
    return MPI_ERR_INFO_KEY;
  }
  if (length > MPI_MAX_INFO_KEY - 1) {
    *problem = absl::StrFormat("key of %d characters (at most %d)", length,
                               MPI_MAX_INFO_KEY - 1);
    return MPI_ERR_INFO_KEY;
  }
  return MPI_SUCCESS;
}

int Info::CheckValue(const char* value, std::string* problem) {
  if (value == nullptr) {
    *problem = "null value";
    return MPI_ERR_INFO_VALUE;
  }
  const size_t length = std::strlen(value);
  if (length > MPI_MAX_INFO_VAL - 1) {
    *problem = absl::StrFormat("value of %d characters (at most %d)", length,
                               MPI_MAX_INFO_VAL - 1);
    return MPI_ERR_INFO_VALUE;
  }
  return MPI_SUCCESS;
}

void Info::Set(std::string_view key, std::string_view value) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Entry& entry : entries_) {
    if (entry.first == key) {
      entry.second = std::string(value);
      return;
    }
  }
  entries_.emplace_back(std::string(key), std::string(value));
}

std::optional<std::string> Info::Get(std::string_view key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Entry& entry : entries_) {
    if (entry.first == key) return entry.second;
  }
  return std::nullopt;
}

bool Info::Delete(std::string_view key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it =
      std::find_if(entries_.begin(), entries_.end(),
                   [&](const Entry& entry) { return entry.first == key; });
  if (it == entries_.end()) return false;
  entries_.erase(it);
  return true;
}

int Info::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(entries_.size());
}

std::optional<std::string> Info::NthKey(int n) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (n < 0 || n >= static_cast<int>(entries_.size())) return std::nullopt;
  return entries_[n].first;
}

std::vector<Info::Entry> Info::Entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

namespace {

// The program's own arguments, as the kernel recorded them.
std::vector<std::string> CommandLine() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(file)),
                  std::istreambuf_iterator<char>());
  std::vector<std::string> arguments;
  size_t start = 0;
  while (start < all.size()) {
    const size_t end = all.find('\0', start);
    arguments.push_back(all.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return arguments;
}

}  // namespace

std::vector<Info::Entry> Info::EnvironmentEntries(int argc, char** argv) {
  std::vector<std::string> arguments;
  if (argv != nullptr && argc > 0) {
    for (int i = 0; i < argc && argv[i] != nullptr; ++i) {
      arguments.emplace_back(argv[i]);
    }
  } else {
    arguments = CommandLine();
  }
  std::vector<Entry> entries;
  if (!arguments.empty()) {
    entries.emplace_back("command", arguments[0]);
    // MPI-4.1 11.2.8: the arguments, space-separated.
    entries.emplace_back(
        "argv", absl::StrJoin(arguments.begin() + 1, arguments.end(), " "));
  }
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) {
    entries.emplace_back("host", host);
  }
  utsname machine;
  if (uname(&machine) == 0) entries.emplace_back("arch", machine.machine);
  char directory[4096];
  if (getcwd(directory, sizeof(directory)) != nullptr) {
    entries.emplace_back("wdir", directory);
  }
  entries.emplace_back("thread_level", "MPI_THREAD_MULTIPLE");
  return entries;
}

Info* Info::Environment() {
  static Info* environment = [] {
    auto* info = new Info(EnvironmentEntries(0, nullptr));  // never freed
    info->predefined_ = true;
    return info;
  }();
  return environment;
}

HandleTable<Info>& InfoTable() {
  static auto* table = new HandleTable<Info>(HandleKind::kInfo);
  return *table;
}

Info* LookupInfo(MPI_Info handle) {
  if (handle == MPI_INFO_ENV) return Info::Environment();
  return InfoTable().Lookup(reinterpret_cast<uintptr_t>(handle));
}

MPI_Info NewInfoHandle(std::unique_ptr<Info> info) {
  const uintptr_t handle = InfoTable().Insert(info.get());
  if (handle == 0) return MPI_INFO_NULL;
  info.release();  // the table's entry owns it until MPI_Info_free
  return reinterpret_cast<MPI_Info>(handle);
}

}  // namespace minimpi
