// libFuzzer harness: the /proc/diskstats parser (core/diskstats.hpp, parse_diskstats and
// DiskstatsDelta). The kernel's text is trusted in form but not in content across kernels
// (field counts changed in 4.18 and 5.5; counters wrap): the parser must take any bytes,
// never write past its outputs, and keep its promises. scripts/test.sh builds this harness
// only when src/core/diskstats.cpp is in sources.mk (the devices feature).
//
// Input: the first byte picks how many devices are wanted (1-4), the next 8 bytes per device
// their major:minor (u32 each, little-endian), the rest is the file's text. Each input is
// parsed twice, then the second reading is diffed against the first.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/diskstats.hpp"

namespace {

using namespace pgsw;

void check(bool ok) {
    if (!ok)
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    const size_t count = 1 + (data[0] & 3);
    if (size < 1 + count * 8)
        return 0;
    DiskId wanted[4];
    for (size_t i = 0; i < count; ++i) {
        std::memcpy(&wanted[i].major, data + 1 + i * 8, 4);
        std::memcpy(&wanted[i].minor, data + 1 + i * 8 + 4, 4);
    }
    const size_t header = 1 + count * 8;
    const std::string_view text(reinterpret_cast<const char *>(data + header), size - header);

    // One spare slot past the outputs: the parser must never touch it.
    DiskReading first[5], second[5];
    second[count].found = first[count].found = false;
    std::memset(first[count].name, 0x5A, kDiskNameMax);
    size_t malformed = 0;
    const size_t found = parse_diskstats(text, wanted, count, first, &malformed);
    check(found <= count);
    check(parse_diskstats(text, wanted, count, second) == found);  // pure, no *malformed
    size_t n = 0;
    for (size_t i = 0; i < count; ++i) {
        n += first[i].found ? 1 : 0;
        check(first[i].found == second[i].found);
        if (first[i].found)
            check(std::memchr(first[i].name, '\0', kDiskNameMax) != nullptr);
    }
    check(n == found);
    check(!first[count].found && first[count].name[0] == 0x5A);

    for (size_t i = 0; i < count; ++i) {
        DiskstatsDelta delta;
        DiskDelta d;
        const DeltaStatus s1 = delta.update(first[i], d);
        const DeltaStatus s2 = delta.update(second[i], d);
        if (first[i].found) {
            check(s1 == DeltaStatus::Baseline);
            check(s2 == DeltaStatus::Ok);  // equal readings: a zero delta
            check(d.reads == 0 && d.writes == 0 && d.io_ms == 0 && d.queue_ms == 0);
        } else {
            check(s1 == DeltaStatus::Missing && s2 == DeltaStatus::Missing);
        }
    }
    uint64_t delta = 0;
    uint64_t previous = 0, current = 0;
    if (text.size() >= 16) {
        std::memcpy(&previous, text.data(), 8);
        std::memcpy(&current, text.data() + 8, 8);
        if (counter_delta(previous, current, delta) && current >= previous)
            check(delta == current - previous);
    }
    return 0;
}
