// The device reading the sampler adds to each tick that reads the I/O counters (pg/devices.cpp):
// one fstat() of pg_tblspc (kept open), one pread() of /proc/diskstats, the wanted lines parsed,
// deltas and the at-limit check. Arg: the devices tracked (8 = the budget's case); the /Synthetic
// variant parses a 200-device file (a large host) from memory.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/devices.hpp"
#include "core/diskstats.hpp"

namespace pgsw {
namespace {

std::vector<DiskId> first_devices(const std::string &text, size_t n) {
    std::vector<DiskId> ids;
    unsigned major = 0, minor = 0;
    for (size_t at = 0; at < text.size() && ids.size() < n;) {
        if (sscanf(text.c_str() + at, "%u %u", &major, &minor) == 2)
            ids.push_back({major, minor});
        const size_t eol = text.find('\n', at);
        at = eol == std::string::npos ? text.size() : eol + 1;
    }
    return ids;
}

void reading(benchmark::State &state, const std::string &synthetic) {
    const int fd = open("/proc/diskstats", O_RDONLY | O_CLOEXEC);
    std::vector<char> buffer(256 * 1024);
    std::string text = synthetic;
    if (text.empty()) {
        const ssize_t n = pread(fd, buffer.data(), buffer.size(), 0);
        text.assign(buffer.data(), n > 0 ? size_t(n) : 0);
    }
    const std::vector<DiskId> wanted = first_devices(text, size_t(state.range(0)));
    std::vector<DiskReading> readings(wanted.size());
    std::vector<DiskstatsDelta> deltas(wanted.size());
    DeviceLimits limits;
    limits.read_iops = 300;
    const int dir_fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    uint64_t found = 0;
    for (auto _ : state) {
        (void)fstat(dir_fd, &st);
        std::string_view view = text;
        if (synthetic.empty()) {
            const ssize_t n = pread(fd, buffer.data(), buffer.size(), 0);
            view = std::string_view(buffer.data(), n > 0 ? size_t(n) : 0);
        }
        found += parse_diskstats(view, wanted.data(), wanted.size(), readings.data());
        for (size_t i = 0; i < wanted.size(); ++i) {
            DiskDelta d;
            if (deltas[i].update(readings[i], d) == DeltaStatus::Ok)
                benchmark::DoNotOptimize(reading_at_limit(d, 1.0, limits));
        }
    }
    state.counters["devices_found"] = double(found) / double(state.iterations());
    close(dir_fd);
    close(fd);
}

void BM_DeviceReading(benchmark::State &state) {
    reading(state, "");
}
BENCHMARK(BM_DeviceReading)->Arg(1)->Arg(8)->Arg(16);

// The user-space part alone: the real file's text parsed from memory, deltas, limit check.
void BM_DeviceParseOnly(benchmark::State &state) {
    const int fd = open("/proc/diskstats", O_RDONLY | O_CLOEXEC);
    std::vector<char> buffer(256 * 1024);
    const ssize_t n = pread(fd, buffer.data(), buffer.size(), 0);
    close(fd);
    std::string text(buffer.data(), n > 0 ? size_t(n) : 0);
    const std::vector<DiskId> wanted = first_devices(text, size_t(state.range(0)));
    std::vector<DiskReading> readings(wanted.size());
    std::vector<DiskstatsDelta> deltas(wanted.size());
    DeviceLimits limits;
    limits.read_iops = 300;
    for (auto _ : state) {
        benchmark::DoNotOptimize(
            parse_diskstats(text, wanted.data(), wanted.size(), readings.data()));
        for (size_t i = 0; i < wanted.size(); ++i) {
            DiskDelta d;
            if (deltas[i].update(readings[i], d) == DeltaStatus::Ok)
                benchmark::DoNotOptimize(reading_at_limit(d, 1.0, limits));
        }
    }
}
BENCHMARK(BM_DeviceParseOnly)->Arg(8);

void BM_DeviceReadingSynthetic(benchmark::State &state) {
    std::string text;
    for (int i = 0; i < 200; ++i)
        text += " 259 " + std::to_string(i) + " nvme" + std::to_string(i) +
                "n1 123456 789 98765432 45678 234567 890 87654321 56789 3 123456 234567 12 0 "
                "96 1 3456 789\n";
    reading(state, text);
}
BENCHMARK(BM_DeviceReadingSynthetic)->Arg(8);

}  // namespace
}  // namespace pgsw
