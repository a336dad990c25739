#include "mpi/tool/pvar_session.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>

namespace minimpi::tool {
namespace {

// Handles started per variable: a variable's enable hook hears true at the
// first start and false after the last stop (serialized by the bindings).
std::map<int, int>& StartedHandles() {
  static std::map<int, int>* started = new std::map<int, int>;
  return *started;
}

enum class Op { kAdd, kSubtract, kMax, kMin };

// One element's arithmetic in the variable's own type.
uint64_t Apply(ValueType type, Op op, uint64_t a, uint64_t b) {
  switch (type) {
    case ValueType::kDouble: {
      const double x = std::bit_cast<double>(a);
      const double y = std::bit_cast<double>(b);
      double r = 0;
      switch (op) {
        case Op::kAdd:
          r = x + y;
          break;
        case Op::kSubtract:
          r = x - y;
          break;
        case Op::kMax:
          r = std::max(x, y);
          break;
        case Op::kMin:
          r = std::min(x, y);
          break;
      }
      return std::bit_cast<uint64_t>(r);
    }
    case ValueType::kInt: {
      const int64_t x = static_cast<int64_t>(a);
      const int64_t y = static_cast<int64_t>(b);
      switch (op) {
        case Op::kAdd:
          return static_cast<uint64_t>(x + y);
        case Op::kSubtract:
          return static_cast<uint64_t>(x - y);
        case Op::kMax:
          return static_cast<uint64_t>(std::max(x, y));
        case Op::kMin:
          return static_cast<uint64_t>(std::min(x, y));
      }
      return 0;
    }
    case ValueType::kUnsignedLongLong:
      switch (op) {
        case Op::kAdd:
          return a + b;
        case Op::kSubtract:
          return a - b;
        case Op::kMax:
          return std::max(a, b);
        case Op::kMin:
          return std::min(a, b);
      }
  }
  return 0;
}

std::vector<uint64_t> ApplyAll(ValueType type, Op op,
                               const std::vector<uint64_t>& a,
                               const std::vector<uint64_t>& b) {
  std::vector<uint64_t> r(a.size());
  for (size_t i = 0; i < a.size(); ++i) r[i] = Apply(type, op, a[i], b[i]);
  return r;
}

}  // namespace

PvarHandle::PvarHandle(int index, const PerformanceVariable* variable,
                       const void* object)
    : index_(index),
      variable_(variable),
      object_(object),
      count_(variable->count_for ? variable->count_for(object)
                                 : variable->count),
      kind_(variable->var_class == MPI_T_PVAR_CLASS_COUNTER ||
                    variable->var_class == MPI_T_PVAR_CLASS_TIMER ||
                    variable->var_class == MPI_T_PVAR_CLASS_AGGREGATE
                ? Kind::kRelative
            : variable->var_class == MPI_T_PVAR_CLASS_HIGHWATERMARK
                ? Kind::kHighMark
            : variable->var_class == MPI_T_PVAR_CLASS_LOWWATERMARK
                ? Kind::kLowMark
                : Kind::kInstantaneous),
      kept_(std::max(count_, 0), 0),
      base_(std::max(count_, 0), 0) {
  if (variable->continuous) {
    started_ = true;
    Enable(true);
    Restart(ReadNow());
  }
}

PvarHandle::~PvarHandle() { Enable(false); }

size_t PvarHandle::element_size() const {
  return variable_->type == ValueType::kInt ? sizeof(int) : sizeof(uint64_t);
}

std::vector<uint64_t> PvarHandle::ReadNow() const {
  std::vector<uint64_t> now(count_, 0);
  if (count_ == 0) return now;
  if (variable_->type == ValueType::kInt) {
    std::vector<int> ints(count_, 0);
    variable_->read(object_, ints.data());
    for (int i = 0; i < count_; ++i) now[i] = static_cast<uint64_t>(ints[i]);
  } else {
    variable_->read(object_, now.data());
  }
  return now;
}

void PvarHandle::Store(const std::vector<uint64_t>& values,
                       void* buffer) const {
  if (variable_->type == ValueType::kInt) {
    int* ints = static_cast<int*>(buffer);
    for (int i = 0; i < count_; ++i) ints[i] = static_cast<int>(values[i]);
  } else if (count_ > 0) {
    std::memcpy(buffer, values.data(), count_ * sizeof(uint64_t));
  }
}

void PvarHandle::Enable(bool on) {
  if (on == enabled_) return;
  enabled_ = on;
  int& started = StartedHandles()[index_];
  started += on ? 1 : -1;
  if (variable_->enable && started == (on ? 1 : 0)) variable_->enable(on);
}

// A new interval begins now: the sum starts from zero at the module's
// value now, a mark from the module's mark (restarted where it can be).
void PvarHandle::Restart(const std::vector<uint64_t>& now) {
  switch (kind_) {
    case Kind::kRelative:
      base_ = now;
      std::fill(kept_.begin(), kept_.end(), 0);  // 0.0's bits too
      break;
    case Kind::kHighMark:
    case Kind::kLowMark:
      if (variable_->reset_mark) {
        variable_->reset_mark(object_);
        kept_ = ReadNow();
      } else {
        kept_ = now;
      }
      break;
    case Kind::kInstantaneous:
      kept_ = now;
      break;
  }
}

std::vector<uint64_t> PvarHandle::View(const std::vector<uint64_t>& now) {
  switch (kind_) {
    case Kind::kRelative:
      if (!started_) return kept_;
      return ApplyAll(variable_->type, Op::kAdd, kept_,
                      ApplyAll(variable_->type, Op::kSubtract, now, base_));
    case Kind::kHighMark:
    case Kind::kLowMark:
      if (started_) {
        kept_ = ApplyAll(variable_->type,
                         kind_ == Kind::kHighMark ? Op::kMax : Op::kMin, kept_,
                         now);
      }
      return kept_;
    case Kind::kInstantaneous:
      return started_ ? now : kept_;
  }
  return kept_;
}

int PvarHandle::Start() {
  if (variable_->continuous) return MPI_T_ERR_PVAR_NO_STARTSTOP;
  if (started_) return MPI_SUCCESS;
  Enable(true);
  const std::vector<uint64_t> now = ReadNow();
  switch (kind_) {
    case Kind::kRelative:
      base_ = now;  // the sum so far is kept
      break;
    case Kind::kHighMark:
    case Kind::kLowMark:
      Restart(now);
      break;
    case Kind::kInstantaneous:
      break;
  }
  started_ = true;
  return MPI_SUCCESS;
}

int PvarHandle::Stop() {
  if (variable_->continuous) return MPI_T_ERR_PVAR_NO_STARTSTOP;
  if (!started_) return MPI_SUCCESS;
  kept_ = View(ReadNow());
  started_ = false;
  Enable(false);
  return MPI_SUCCESS;
}

int PvarHandle::Read(void* buffer) {
  Store(View(started_ ? ReadNow() : kept_), buffer);
  return MPI_SUCCESS;
}

int PvarHandle::Write(const void* buffer) {
  if (variable_->readonly) return MPI_T_ERR_PVAR_NO_WRITE;
  std::vector<uint64_t> values(count_, 0);
  if (variable_->type == ValueType::kInt) {
    const int* ints = static_cast<const int*>(buffer);
    for (int i = 0; i < count_; ++i) values[i] = static_cast<uint64_t>(ints[i]);
  } else if (count_ > 0) {
    std::memcpy(values.data(), buffer, count_ * sizeof(uint64_t));
  }
  kept_ = values;
  if (started_ && kind_ == Kind::kRelative) base_ = ReadNow();
  return MPI_SUCCESS;
}

int PvarHandle::Reset() {
  if (variable_->readonly) return MPI_T_ERR_PVAR_NO_WRITE;
  const std::vector<uint64_t> now = ReadNow();
  Restart(now);
  return MPI_SUCCESS;
}

int PvarHandle::ReadReset(void* buffer) {
  if (variable_->readonly) return MPI_T_ERR_PVAR_NO_WRITE;
  if (!variable_->atomic) return MPI_T_ERR_PVAR_NO_ATOMIC;
  const std::vector<uint64_t> now = ReadNow();
  Store(View(now), buffer);
  Restart(now);
  return MPI_SUCCESS;
}

PvarHandle* PvarSession::AddHandle(int index,
                                   const PerformanceVariable* variable,
                                   const void* object) {
  if (variable->count_for && variable->count_for(object) < 0) return nullptr;
  handles_.push_back(std::make_unique<PvarHandle>(index, variable, object));
  return handles_.back().get();
}

bool PvarSession::Owns(const void* handle) const {
  for (const auto& owned : handles_) {
    if (owned.get() == handle) return true;
  }
  return false;
}

void PvarSession::FreeHandle(PvarHandle* handle) {
  for (auto it = handles_.begin(); it != handles_.end(); ++it) {
    if (it->get() == handle) {
      handles_.erase(it);
      return;
    }
  }
}

}  // namespace minimpi::tool
