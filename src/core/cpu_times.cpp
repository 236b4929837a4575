#include "core/cpu_times.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cctype>

namespace pgsw {
namespace {

// Reads one unsigned decimal field after spaces; false at the end of the line or on junk.
bool next_field(std::string_view &s, uint64_t &value) noexcept {
    size_t i = 0;
    while (i < s.size() && s[i] == ' ')
        ++i;
    if (i == s.size() || !std::isdigit(static_cast<unsigned char>(s[i])))
        return false;
    uint64_t v = 0;
    for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
        const uint64_t digit = uint64_t(s[i] - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return false;  // no kernel counts that far: junk
        v = v * 10 + digit;
    }
    s.remove_prefix(i);
    value = v;
    return true;
}

}  // namespace

std::optional<CpuTimes> parse_proc_stat_cpu(std::string_view s) noexcept {
    constexpr std::string_view kPrefix = "cpu ";
    if (s.substr(0, kPrefix.size()) != kPrefix)
        return std::nullopt;
    s.remove_prefix(kPrefix.size());
    s = s.substr(0, s.find('\n'));
    enum { kUser, kNice, kSystem, kIdle, kIowait, kIrq, kSoftirq, kSteal, kFields };
    std::array<uint64_t, kFields> f{};
    size_t n = 0;
    while (n < kFields && next_field(s, f[n]))
        ++n;
    if (n <= kIdle)
        return std::nullopt;
    CpuTimes t;
    t.busy_ticks = f[kUser] + f[kNice] + f[kSystem] + f[kIrq] + f[kSoftirq] + f[kSteal];
    t.total_ticks = t.busy_ticks + f[kIdle] + f[kIowait];
    return t;
}

CpuDeltas::Delta CpuDeltas::observe(const CpuTimes &now) noexcept {
    Delta d;
    if (have_previous_ && now.busy_ticks >= previous_.busy_ticks &&
        now.total_ticks >= previous_.total_ticks) {
        d.valid = true;
        d.busy_us = (now.busy_ticks - previous_.busy_ticks) * us_per_tick_;
        d.total_us = (now.total_ticks - previous_.total_ticks) * us_per_tick_;
    }
    previous_ = now;
    have_previous_ = true;
    return d;
}

ProcStatReader::ProcStatReader(const char *path) noexcept : fd_(open(path, O_RDONLY | O_CLOEXEC)) {}

ProcStatReader::~ProcStatReader() {
    if (fd_ >= 0)
        close(fd_);
}

std::optional<CpuTimes> ProcStatReader::read() noexcept {
    if (fd_ < 0)
        return std::nullopt;
    const ssize_t n = pread(fd_, buffer_.data(), buffer_.size(), 0);
    if (n <= 0)
        return std::nullopt;
    return parse_proc_stat_cpu(std::string_view(buffer_.data(), size_t(n)));
}

}  // namespace pgsw
