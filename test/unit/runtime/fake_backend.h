// fake_backend.h - a device backend for the allocator's tests: real host
// memory (so that tests can write to blocks), a capacity past which it is
// out of memory, counters, and events that complete only when the test
// says so. Thread-safe, like a real backend must be.
#ifndef TCC_TEST_UNIT_RUNTIME_FAKE_BACKEND_H
#define TCC_TEST_UNIT_RUNTIME_FAKE_BACKEND_H

#include "tcc/runtime.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace tcc::testing {

class FakeBackend {
public:
  struct Options {
    uint64_t capacity = UINT64_MAX; // device memory
    bool events = false;            // offer the event functions
    bool hostAccessible = true;
  };

  FakeBackend() : FakeBackend(Options{}) {}
  explicit FakeBackend(Options options) : options_(options) {}
  ~FakeBackend() {
    for (auto &[ptr, size] : live_)
      std::free(ptr);
    for (Event *e : events_)
      delete e;
  }

  /// The backend struct to give tcc_allocator_create.
  tcc_device_backend_t backend() {
    tcc_device_backend_t b{};
    b.name = "fake";
    b.flags = options_.hostAccessible ? TCC_DEVICE_BACKEND_HOST_ACCESSIBLE : 0;
    b.self = this;
    b.allocate = [](void *self, uint64_t bytes, tcc_stream_t stream,
                    void **out) {
      return static_cast<FakeBackend *>(self)->allocate(bytes, stream, out);
    };
    b.deallocate = [](void *self, void *ptr, uint64_t bytes) {
      static_cast<FakeBackend *>(self)->deallocate(ptr, bytes);
    };
    if (options_.events) {
      b.record_event = [](void *self, tcc_stream_t stream, void **out) {
        return static_cast<FakeBackend *>(self)->recordEvent(stream, out);
      };
      b.query_event = [](void *self, void *event) -> int32_t {
        static_cast<FakeBackend *>(self)->hook();
        return static_cast<Event *>(event)->complete.load();
      };
      b.synchronize_event = [](void *self, void *event) {
        static_cast<FakeBackend *>(self)->hook();
        ++static_cast<FakeBackend *>(self)->synchronizations;
        static_cast<Event *>(event)->complete = true;
      };
      b.destroy_event = [](void *self, void *event) {
        static_cast<FakeBackend *>(self)->destroyEvent(
            static_cast<Event *>(event));
      };
    }
    b.destroy = [](void *self) {
      static_cast<FakeBackend *>(self)->destroyed = true;
    };
    return b;
  }

  /// Completes the work of every event recorded so far.
  void completeEvents() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Event *e : events_)
      e->complete = true;
  }
  size_t liveEvents() {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_.size();
  }
  /// Segment sizes allocated so far, in order.
  std::vector<uint64_t> allocationSizes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return sizes_;
  }
  uint64_t liveBytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return liveBytes_;
  }
  uint64_t peakLiveBytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return peakLiveBytes_;
  }
  void setCapacity(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    options_.capacity = bytes;
  }

  /// Runs inside every backend call; tests use it to see what state the
  /// allocator is in while it calls the device.
  std::function<void()> onCall;

  std::atomic<int> allocations{0}, deallocations{0}, failures{0},
      synchronizations{0}, badDeallocations{0};
  std::atomic<bool> destroyed{false};

private:
  struct Event {
    tcc_stream_t stream;
    std::atomic<bool> complete{false};
  };

  void hook() {
    if (onCall)
      onCall();
  }

  tcc_status_t allocate(uint64_t bytes, tcc_stream_t, void **out) {
    hook();
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > options_.capacity - std::min(options_.capacity, liveBytes_)) {
      ++failures;
      std::string message = "fake device out of memory (" +
                            std::to_string(bytes) + " bytes asked, " +
                            std::to_string(liveBytes_) + " in use)";
      return tcc_status_create(TCC_STATUS_RESOURCE_EXHAUSTED, message.c_str());
    }
    void *p = std::aligned_alloc(512, (bytes + 511) / 512 * 512);
    live_[p] = bytes;
    sizes_.push_back(bytes);
    liveBytes_ += bytes;
    peakLiveBytes_ = std::max(peakLiveBytes_, liveBytes_);
    ++allocations;
    *out = p;
    return nullptr;
  }

  void deallocate(void *ptr, uint64_t bytes) {
    hook();
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end() || it->second != bytes) {
      ++badDeallocations;
      return;
    }
    liveBytes_ -= bytes;
    live_.erase(it);
    std::free(ptr);
    ++deallocations;
  }

  tcc_status_t recordEvent(tcc_stream_t stream, void **out) {
    hook();
    std::lock_guard<std::mutex> lock(mutex_);
    Event *e = new Event;
    e->stream = stream;
    events_.push_back(e);
    *out = e;
    return nullptr;
  }

  void destroyEvent(Event *e) {
    hook();
    std::lock_guard<std::mutex> lock(mutex_);
    events_.erase(std::find(events_.begin(), events_.end(), e));
    delete e;
  }

  Options options_;
  std::mutex mutex_;
  std::unordered_map<void *, uint64_t> live_;
  std::vector<uint64_t> sizes_;
  std::vector<Event *> events_;
  uint64_t liveBytes_ = 0, peakLiveBytes_ = 0;
};

} // namespace tcc::testing

#endif // TCC_TEST_UNIT_RUNTIME_FAKE_BACKEND_H
