// The text report (core/report.hpp): width, line limit, sections.
#include <string>

#include <gtest/gtest.h>

#include "core/report.hpp"

namespace pgsw {
namespace {

TEST(WrapText, CutsAtSpacesWithinTheWidth) {
    const std::string text(30, 'a');
    const auto lines = wrap_text(text + " " + text + " " + text + " " + text, "> ", "  ", 70);
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0], "> " + text + " " + text);
    EXPECT_EQ(lines[1], "  " + text + " " + text);
    for (const auto &l : wrap_text(std::string(250, 'x'), "", "", 100))
        EXPECT_LE(l.size(), 100u);
}

SymptomRows rows(const std::string &evidence) {
    SymptomRows r;
    for (size_t i = 0; i < kSymptomCount; ++i) {
        r[i].symptom = static_cast<Symptom>(i);
        r[i].status = i == 4 ? SymptomStatus::Present : SymptomStatus::Ok;
        r[i].storage_implicated = 0;
        r[i].evidence = evidence;
    }
    return r;
}

TEST(Report, SectionsWidthAndLimit) {
    WindowSummary s;
    s.diagnosis.hint = "Look at the locks.";
    const SymptomRows r = rows("Slot sub1 (logical, inactive) is 118.0 MB behind.");
    ReportInput in;
    in.window_seconds = 900, in.window_start = "a", in.window_end = "b";
    in.summary = &s, in.symptoms = &r;
    const auto lines = build_report(in);
    std::string all;
    for (const auto &l : lines) {
        EXPECT_LE(l.size(), kReportWidth) << l;
        all += l + "\n";
    }
    EXPECT_LE(lines.size(), kReportMaxLines);
    for (const char *part :
         {"Verdict: idle", "Where a transaction's time goes", "The volume:", "The five symptoms",
          "replication_lag", "present", "Next steps:", "drop it"})
        EXPECT_NE(all.find(part), std::string::npos) << part << "\n" << all;
}

TEST(Report, LongEvidenceIsCutTo40Lines) {
    WindowSummary s;
    const SymptomRows r = rows(std::string(2000, 'y'));
    ReportInput in;
    in.summary = &s, in.symptoms = &r;
    const auto lines = build_report(in);
    EXPECT_EQ(lines.size(), kReportMaxLines);
    EXPECT_NE(lines.back().find("more lines"), std::string::npos);
}

TEST(Report, DeviceLineHasTheIostatFiguresAndTheCeiling) {
    DeviceFigures f;
    f.reads_per_s = {true, 295.4}, f.writes_per_s = {true, 12.2};
    f.read_mb_per_s = {true, 2.3}, f.write_mb_per_s = {true, 0.1};
    f.read_await_ms = {true, 0.70}, f.pg_read_latency_ms = {true, 51.4};
    f.util_pct = {true, 85.2}, f.iops_limit = {true, 300}, f.at_limit_pct = {true, 93.8};
    f.limit = StorageLimit::IopsCeiling;
    EXPECT_EQ(device_report_line("loop0", "data", f),
              "loop0 (data): 295 reads/s, 12 writes/s, 2.4 MB/s; read await 0.70 ms, PostgreSQL "
              "reads 51.40 ms; util 85 %; IOPS limit 300 (94 % of readings at it): at its IOPS "
              "ceiling");
    EXPECT_EQ(device_report_line("sda", "", DeviceFigures{}), "sda: no reading in the window");
}

}  // namespace
}  // namespace pgsw
