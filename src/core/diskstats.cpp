#include "core/diskstats.hpp"

#include <cstring>

namespace pgsw {
namespace {

constexpr size_t kMaxFields = 20;  // the kernel prints 17 numbers today; room for a few more

bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r';
}

// One unsigned decimal number; false on a non-digit or a 64-bit overflow.
bool parse_u64(std::string_view token, uint64_t &value) noexcept {
    if (token.empty() || token.size() > 20)
        return false;
    uint64_t v = 0;
    for (char c : token) {
        if (c < '0' || c > '9')
            return false;
        const uint64_t digit = uint64_t(c - '0');
        if (v > (UINT64_MAX - digit) / 10)
            return false;
        v = v * 10 + digit;
    }
    value = v;
    return true;
}

// Splits the next whitespace-separated token off `line`.
std::string_view next_token(std::string_view &line) noexcept {
    size_t i = 0;
    while (i < line.size() && is_space(line[i]))
        ++i;
    size_t j = i;
    while (j < line.size() && !is_space(line[j]))
        ++j;
    const std::string_view token = line.substr(i, j - i);
    line.remove_prefix(j);
    return token;
}

// The counters after the name: 4, 11, 15, 17 or more numbers (newer kernels may append).
bool parse_counters(std::string_view rest, DiskCounters &c) noexcept {
    uint64_t f[kMaxFields];
    size_t n = 0;
    for (std::string_view t = next_token(rest); !t.empty(); t = next_token(rest)) {
        if (n == kMaxFields || !parse_u64(t, f[n]))
            return false;
        ++n;
    }
    c = DiskCounters{};
    if (n == 4) {  // old partition format
        c.reads = f[0], c.read_sectors = f[1], c.writes = f[2], c.write_sectors = f[3];
        return true;
    }
    if (n < 11 || (n > 11 && n < 15) || n == 16)
        return false;
    c.reads = f[0], c.read_sectors = f[2], c.read_ms = f[3];
    c.writes = f[4], c.write_sectors = f[6], c.write_ms = f[7];
    c.in_flight = f[8], c.io_ms = f[9], c.queue_ms = f[10];
    c.has_times = true;
    if (n >= 17)
        c.flushes = f[15], c.flush_ms = f[16], c.has_flushes = true;
    return true;
}

int wanted_index(const DiskId *wanted, size_t count, uint64_t major, uint64_t minor) noexcept {
    for (size_t i = 0; i < count; ++i)
        if (wanted[i].major == major && wanted[i].minor == minor)
            return static_cast<int>(i);
    return -1;
}

}  // namespace

size_t parse_diskstats(std::string_view text, const DiskId *wanted, size_t count, DiskReading *out,
                       size_t *malformed) noexcept {
    for (size_t i = 0; i < count; ++i)
        out[i] = DiskReading{};
    size_t found = 0, bad = 0;
    while (!text.empty()) {
        const size_t eol = text.find('\n');
        std::string_view line = text.substr(0, eol);
        text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
        if (line.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        uint64_t major = 0, minor = 0;
        if (!parse_u64(next_token(line), major) || !parse_u64(next_token(line), minor)) {
            ++bad;
            continue;
        }
        const int index = wanted_index(wanted, count, major, minor);
        if (index < 0 || out[index].found)
            continue;  // not wanted (most lines), or a repeated line: the first one counts
        const std::string_view name = next_token(line);
        DiskReading &r = out[index];
        if (name.empty() || name.size() >= kDiskNameMax || !parse_counters(line, r.counters)) {
            r = DiskReading{};
            ++bad;
            continue;
        }
        std::memcpy(r.name, name.data(), name.size());
        r.name[name.size()] = '\0';
        r.found = true;
        ++found;
    }
    if (malformed)
        *malformed = bad;
    return found;
}

bool parse_device_stat(std::string_view text, DiskCounters &out) noexcept {
    const size_t eol = text.find('\n');
    if (eol != std::string_view::npos &&
        text.find_first_not_of(" \t\r\n", eol) != std::string_view::npos)
        return false;  // one line only
    DiskCounters c;
    if (!parse_counters(text.substr(0, eol), c) || !c.has_times)
        return false;
    out = c;
    return true;
}

size_t diskstats_lines(std::string_view text) noexcept {
    size_t n = 0;
    for (char c : text)
        n += c == '\n';
    return n + (!text.empty() && text.back() != '\n');
}

bool counter_delta(uint64_t previous, uint64_t current, uint64_t &delta) noexcept {
    if (current >= previous) {
        delta = current - previous;
        return true;
    }
    // A 32-bit counter that wrapped: both values fit in 32 bits and the change is less than
    // half the range (a reset to a small value after a large one is not a wrap).
    constexpr uint64_t k32 = uint64_t{1} << 32;
    if (previous < k32 && current < k32) {
        const uint64_t wrapped = k32 - previous + current;
        if (wrapped < k32 / 2) {
            delta = wrapped;
            return true;
        }
    }
    return false;
}

DeltaStatus DiskstatsDelta::update(const DiskReading &reading, DiskDelta &d) noexcept {
    d = DiskDelta{};
    if (!reading.found) {
        have_previous_ = false;  // a device back later starts from a new baseline
        return DeltaStatus::Missing;
    }
    const DiskCounters &c = reading.counters;
    const bool same_device = have_previous_ && std::strcmp(name_, reading.name) == 0 &&
                             previous_.has_times == c.has_times &&
                             previous_.has_flushes == c.has_flushes;
    const bool first = !have_previous_;
    bool ok = same_device;
    if (ok) {
        const DiskCounters &p = previous_;
        ok = counter_delta(p.reads, c.reads, d.reads) &&
             counter_delta(p.read_sectors, c.read_sectors, d.read_sectors) &&
             counter_delta(p.read_ms, c.read_ms, d.read_ms) &&
             counter_delta(p.writes, c.writes, d.writes) &&
             counter_delta(p.write_sectors, c.write_sectors, d.write_sectors) &&
             counter_delta(p.write_ms, c.write_ms, d.write_ms) &&
             counter_delta(p.io_ms, c.io_ms, d.io_ms) &&
             counter_delta(p.queue_ms, c.queue_ms, d.queue_ms) &&
             counter_delta(p.flushes, c.flushes, d.flushes) &&
             counter_delta(p.flush_ms, c.flush_ms, d.flush_ms);
        d.has_flushes = c.has_flushes;
    }
    previous_ = c;
    std::memcpy(name_, reading.name, sizeof name_);
    have_previous_ = true;
    if (ok)
        return DeltaStatus::Ok;
    d = DiskDelta{};
    return first ? DeltaStatus::Baseline : DeltaStatus::Reset;
}

}  // namespace pgsw
