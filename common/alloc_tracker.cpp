// alloc_tracker.cpp — counting global operator new/delete; see alloc_tracker.h.
#include "alloc_tracker.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {

std::atomic<size_t> g_live{0}, g_peak{0}, g_base{0};
constexpr size_t kPrefix = 16;  // keeps the returned pointer 16-byte aligned

void* counted_alloc(size_t n) {
    auto* p = static_cast<unsigned char*>(std::malloc(n + kPrefix));
    if (!p) throw std::bad_alloc();
    *reinterpret_cast<size_t*>(p) = n;
    size_t live = g_live.fetch_add(n) + n, peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {}
    return p + kPrefix;
}

void counted_free(void* q) noexcept {
    if (!q) return;
    auto* p = static_cast<unsigned char*>(q) - kPrefix;
    g_live.fetch_sub(*reinterpret_cast<size_t*>(p));
    std::free(p);
}

}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }

namespace attn::alloc_tracker {

void begin() {
    g_base = g_live.load();
    g_peak = g_base.load();
}

size_t peak_bytes_since_begin() { return g_peak.load() - g_base.load(); }

}  // namespace attn::alloc_tracker
