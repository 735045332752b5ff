// launch_log.cpp — see launch_log.h: the trusted side (the page, and what it says in words).
#include "common/remote/launch_log.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <vector>

namespace attn::remote::launch_log {
namespace {

Page* g_page = nullptr;
int g_fd = -1;

// Printable ASCII only, at most `max` characters of a field the runner wrote (not trusted to end in a NUL).
std::string printable(const char* text, size_t size, size_t max = 120) {
    std::string out;
    for (size_t i = 0; i < size && text[i]; ++i) out += (text[i] >= 32 && text[i] < 127) ? text[i] : '?';
    if (out.size() > max) out = out.substr(0, max) + "…";
    return out;
}

std::string bytes_text(uint64_t b) {
    if (b < 1024) return fmt::format("{} B", b);
    return fmt::format("{:.1f} KB", double(b) / 1024);
}

std::string one_launch(const Launch& l, uint32_t sm_count) {
    if (l.graph) return "a CUDA graph (its kernels are not listed)";
    const uint64_t blocks = uint64_t(l.grid[0]) * l.grid[1] * l.grid[2];
    const uint64_t threads = uint64_t(l.block[0]) * l.block[1] * l.block[2];
    std::string text = fmt::format("`{}`: grid {}×{}×{} = {} block{} of {}×{}×{} = {} threads", printable(l.name, sizeof l.name),
                                   l.grid[0], l.grid[1], l.grid[2], blocks, blocks == 1 ? "" : "s", l.block[0], l.block[1],
                                   l.block[2], threads);
    text += fmt::format(", {} shared memory", bytes_text(uint64_t(l.static_smem) + l.dynamic_smem));
    if (l.regs >= 0 && l.regs < 1024) text += fmt::format(", {} registers a thread", l.regs);
    if (sm_count == 0 || sm_count > 100000) return text;
    const int per_sm = l.blocks_per_sm > 0 && l.blocks_per_sm < 4096 ? l.blocks_per_sm : 0;
    if (blocks < sm_count)
        return text + fmt::format(" — {} block{} for {} SMs: {} SMs had nothing to do{}", blocks, blocks == 1 ? "" : "s", sm_count,
                                  sm_count - blocks,
                                  per_sm ? fmt::format(" (each SM could hold {} such blocks at once)", per_sm) : "");
    if (per_sm) {
        const double waves = double(blocks) / (double(sm_count) * per_sm);
        return text + fmt::format(" — {} wave{} of {} SMs × {} blocks", waves < 10 ? fmt::format("{:.2g}", waves) : fmt::format("{:.0f}", waves),
                                  waves == 1.0 ? "" : "s", sm_count, per_sm);
    }
    return text + fmt::format(" — {:.2g} blocks an SM", double(blocks) / sm_count);
}

}  // namespace

int create_page() {
    if (g_page) munmap(g_page, sizeof(Page)), g_page = nullptr;
    if (g_fd >= 0) close(g_fd), g_fd = -1;
    const int fd = memfd_create("attnlab-launch-log", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return -1;
    void* p = MAP_FAILED;
    if (ftruncate(fd, sizeof(Page)) == 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0)
        p = mmap(nullptr, sizeof(Page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return -1;
    }
    g_page = static_cast<Page*>(p), g_fd = fd;
    reset_page();
    return fd;
}

void reset_page() {
    if (!g_page) return;
    std::memset(static_cast<void*>(g_page), 0, sizeof(Page));
    g_page->magic = kMagic;
}

// A copy of the shared page (the runner may still write into it), or an empty one without a page.
Page snapshot() {
    Page copy{};
    if (g_page) std::memcpy(static_cast<void*>(&copy), g_page, sizeof copy);
    return copy;
}

std::string describe_current(bool hung) { return describe(snapshot(), hung); }

std::string list_current() { return list(snapshot()); }

std::string list(const Page& page) {
    if (page.magic != kMagic || !page.watched) return "";
    if (page.unavailable[0]) return "(not recorded: " + printable(page.unavailable, sizeof page.unavailable) + ")";
    if (page.count == 0) return "no kernel launched";
    std::string text = fmt::format("{} launch{}", page.count, page.count == 1 ? "" : "es");
    std::vector<std::string> seen;
    const uint64_t first = page.count > uint64_t(kKept) ? page.count - kKept : 0;
    for (uint64_t i = first; i < page.count; ++i) {
        const Launch& l = page.latest[i % kKept];
        const std::string name = printable(l.name, sizeof l.name) + (l.graph ? "#graph" : "");
        if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
        seen.push_back(name);
        text += (seen.size() == 1 ? ": " : "; ") + one_launch(l, page.sm_count);
    }
    return text;
}

std::string describe(const Page& page, bool hung) {
    if (page.magic != kMagic) return "";
    if (page.unavailable[0]) return "(its kernel launches were not recorded: " + printable(page.unavailable, sizeof page.unavailable) + ")";
    if (!page.watched) return "";  // no student call ran with the log on: nothing to say either way
    if (page.count == 0 && !hung) return "";
    if (page.count == 0)
        return "It launched no kernel in this call: the time went on the CPU (a loop in host code, or a wait for "
               "something that never comes).";
    const Launch& last = page.latest[(page.count - 1) % kKept];
    std::string text = fmt::format("Its last kernel launch{}: {}.", page.count > 1 ? fmt::format(" (of {} in this call)", page.count) : "",
                                   one_launch(last, page.sm_count));
    // the launch before it, when it was another kernel (a two-kernel design: which one hung?)
    if (page.count > 1) {
        const Launch& before = page.latest[(page.count - 2) % kKept];
        if (std::strncmp(before.name, last.name, sizeof last.name) != 0 || before.graph != last.graph)
            text += " The one before it: " + one_launch(before, page.sm_count) + ".";
    }
    return text;
}

}  // namespace attn::remote::launch_log
