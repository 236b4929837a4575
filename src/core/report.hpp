#include "core/cpp_only.hpp"
#pragma once
// storage_wait_report(): the talk's whole manual method as one plain-text report for psql, one
// line per row, readable without \x: the verdict and score, where a transaction's time goes
// (storage_wait_breakdown's numbers), the volume, the five symptoms and the next steps. At most
// kReportMaxLines lines of at most kReportWidth columns (longer text is wrapped; what does not
// fit is cut, and the last line says where the rest is).
#include <cstddef>
#include <string>
#include <vector>

#include "core/devices.hpp"
#include "core/symptoms.hpp"
#include "core/window.hpp"

namespace pgsw {

constexpr size_t kReportMaxLines = 40;
constexpr size_t kReportWidth = 100;

struct ReportInput {
    double window_seconds = 0;             // asked for
    std::string window_start, window_end;  // formatted by the caller ("2026-12-02 03:00:00")
    const WindowSummary *summary = nullptr;
    const SymptomRows *symptoms = nullptr;
    // THE VOLUME: lines about the data/WAL devices (storage_device_stats), already one fact a
    // line; empty when no device reading exists (the section then says so).
    std::vector<std::string> volume_lines;
};

std::vector<std::string> build_report(const ReportInput &input);

// One device's line for the report's volume section, from storage_device_stats' figures:
// "loop0 (data): 295 reads/s, 12 writes/s, 2.3 MB/s; await 0.70 ms, PostgreSQL reads 51.4 ms;
// util 85 %; IOPS limit 300 (94 % of readings at it)". `roles`: "data, wal".
std::string device_report_line(const std::string &device, const std::string &roles,
                               const DeviceFigures &f);

// `text` cut into lines of at most `width` columns at spaces, the first prefixed by `first`
// and the rest by `indent` (words longer than a line are split).
std::vector<std::string> wrap_text(const std::string &text, const std::string &first,
                                   const std::string &indent, size_t width = kReportWidth);

}  // namespace pgsw
