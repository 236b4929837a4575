#include "core/report.hpp"

#include "core/text_format.hpp"

namespace pgsw {
namespace {

void add(std::vector<std::string> &out, const std::vector<std::string> &lines) {
    out.insert(out.end(), lines.begin(), lines.end());
}

std::string window_line(const ReportInput &in) {
    const WindowSummary &s = *in.summary;
    return format("pg_storage_wait report: %s .. %s (%.0f s asked, %.0f s measured, %llu ticks)",
                  in.window_start.c_str(), in.window_end.c_str(), in.window_seconds,
                  s.covered_seconds, static_cast<unsigned long long>(s.ticks));
}

std::vector<std::string> verdict_lines(const WindowSummary &s) {
    const Diagnosis &d = s.diagnosis;
    std::string text = format("Verdict: %s", verdict_name(d.verdict));
    if (d.score_valid)
        text += format(", storage-bound score %.1f/100, %.2fx faster at the reference latency",
                       d.storage_bound_score, d.speedup_at_reference);
    else
        text += ", score unknown";
    if (d.pct_valid)
        text += format(
            "; sessions' time: storage %.1f %%, CPU %.1f %%, locks %.1f %%, other "
            "%.1f %% (%.1f active on average)",
            d.storage_pct, d.cpu_pct, d.lock_pct, d.other_pct, s.active_backends_avg);
    text += ".";
    std::vector<std::string> lines = wrap_text(text, "", "  ");
    if (!d.hint.empty())
        add(lines, wrap_text(d.hint, "  ", "  "));
    return lines;
}

std::vector<std::string> breakdown_lines(const Diagnosis &d) {
    std::string head = "Where a transaction's time goes";
    if (d.xacts_valid)
        head += format(" (%.1f xacts/s, %.3f ms each; storage_wait_breakdown):", d.xacts_per_s,
                       d.xact_time_ms);
    else
        head += format(" (per transaction unknown: %s):",
                       d.xacts_reason.empty() ? "no transactions" : d.xacts_reason.c_str());
    std::string parts;
    for (size_t c = 0; c < kComponentCount; ++c) {
        const ComponentTime &t = d.components[c];
        if (t.samples == 0)
            continue;
        std::string part =
            format("%s %.1f %%", component_name(static_cast<Component>(c)), t.share_pct);
        if (d.xacts_valid)
            part += format(" %.3f ms", t.ms_per_xact);
        if (t.latency_known)
            part += format(" (%.2f ms per I/O)", t.latency_ms);
        parts += (parts.empty() ? "" : ", ") + part;
    }
    std::vector<std::string> lines = wrap_text(head, "", "  ");
    add(lines, wrap_text(parts.empty() ? "no active session sampled" : parts, "  ", "  "));
    return lines;
}

std::vector<std::string> volume_lines(const ReportInput &in) {
    std::vector<std::string> lines{"The volume:"};
    if (in.volume_lines.empty())
        lines.push_back("  no device readings in this window");
    for (const std::string &l : in.volume_lines)
        add(lines, wrap_text(l, "  ", "    "));
    return lines;
}

std::vector<std::string> symptom_lines(const SymptomRows &rows) {
    std::vector<std::string> lines{"The five symptoms (storage_wait_symptoms):"};
    for (const SymptomRow &r : rows) {
        const std::string head =
            format("  %-26s %-8s ", symptom_name(r.symptom), symptom_status_name(r.status));
        const char *storage = r.storage_implicated > 0 ? "[storage] " : "";
        add(lines, wrap_text(storage + r.evidence, head, std::string(head.size(), ' ')));
    }
    return lines;
}

// What to do about each present (or watched) symptom, storage first.
std::string next_step(const SymptomRow &r) {
    const bool storage = r.storage_implicated > 0;
    switch (r.symptom) {
        case Symptom::SlowIngestion:
            return storage ? "Writes slow down as storage latency rises: check the volume's "
                             "latency and IOPS limit before tuning the statements."
                           : "Writes slow down without storage getting worse: look at locks, "
                             "CPU and index growth (storage_wait_events).";
        case Symptom::InconsistentReadLatency:
            return "Read latency is uneven: look for a throttled or shared volume (burst "
                   "credits, noisy neighbour); storage_wait_history('1 hour', '1 minute') shows "
                   "when.";
        case Symptom::DelayedAutovacuum:
            return storage ? "Autovacuum waits on storage: it competes with the sessions for the "
                             "same volume; faster storage, or fewer competing reads."
                           : "Autovacuum is throttled or busy on CPU: raise "
                             "autovacuum_vacuum_cost_limit or lower autovacuum_vacuum_cost_delay, "
                             "or add workers.";
        case Symptom::SlowerCheckpoints:
            return "Checkpoints slow the sessions down: spread them "
                   "(checkpoint_completion_target, max_wal_size), and check the volume's fsync "
                   "latency.";
        case Symptom::ReplicationLag:
            return storage ? "A slot falls behind while its walsender reads WAL or spills from "
                             "storage: faster WAL storage, or logical_decoding_work_mem."
                           : "A slot falls behind: consume it or drop it "
                             "(pg_drop_replication_slot) before pg_wal fills up.";
        default:
            return "";
    }
}

std::vector<std::string> next_steps(const WindowSummary &s, const SymptomRows &rows) {
    std::vector<std::string> lines{"Next steps:"};
    int n = 0;
    for (SymptomStatus status : {SymptomStatus::Present, SymptomStatus::Watch})
        for (int storage : {1, 0, -1})
            for (const SymptomRow &r : rows)
                if (r.status == status && r.storage_implicated == storage)
                    add(lines, wrap_text(next_step(r), format("  %d. ", ++n), "     "));
    if (n == 0)
        add(lines, wrap_text(s.diagnosis.hint.empty() ? "Nothing to do: no symptom is present."
                                                      : s.diagnosis.hint,
                             "  1. ", "     "));
    return lines;
}

}  // namespace

std::vector<std::string> wrap_text(const std::string &text, const std::string &first,
                                   const std::string &indent, size_t width) {
    std::vector<std::string> lines;
    std::string line = first;
    size_t prefix = first.size();
    size_t pos = 0;
    while (pos < text.size()) {
        while (pos < text.size() && text[pos] == ' ')
            ++pos;
        size_t end = text.find(' ', pos);
        if (end == std::string::npos)
            end = text.size();
        std::string word = text.substr(pos, end - pos);
        pos = end;
        if (word.empty())
            break;
        const bool line_has_words = line.size() > prefix;
        if (line.size() + (line_has_words ? 1 : 0) + word.size() > width && line_has_words) {
            lines.push_back(line);
            line = indent, prefix = indent.size();
        }
        while (line.size() + word.size() > width) {  // a word longer than the line
            const size_t room = width > line.size() ? width - line.size() : 0;
            if (room == 0) {
                lines.push_back(line);
                line = indent, prefix = indent.size();
                continue;
            }
            line += word.substr(0, room);
            word = word.substr(room);
            lines.push_back(line);
            line = indent, prefix = indent.size();
        }
        if (line.size() > prefix)
            line += ' ';
        line += word;
    }
    if (line.size() > prefix || lines.empty())
        lines.push_back(line);
    return lines;
}

std::vector<std::string> build_report(const ReportInput &in) {
    std::vector<std::string> out{window_line(in).substr(0, kReportWidth)};
    add(out, verdict_lines(*in.summary));
    add(out, breakdown_lines(in.summary->diagnosis));
    add(out, volume_lines(in));
    add(out, symptom_lines(*in.symptoms));
    add(out, next_steps(*in.summary, *in.symptoms));
    if (out.size() > kReportMaxLines) {
        const size_t cut = out.size() - (kReportMaxLines - 1);
        out.resize(kReportMaxLines - 1);
        out.push_back(
            format("(%zu more lines: see storage_wait_symptoms() and "
                   "storage_wait_summary())",
                   cut));
    }
    return out;
}

std::string device_report_line(const std::string &device, const std::string &roles,
                               const DeviceFigures &f) {
    std::string line = device + (roles.empty() ? "" : " (" + roles + ")") + ":";
    if (!f.reads_per_s.valid)
        return line + " no reading in the window";
    line += format(" %.0f reads/s, %.0f writes/s", f.reads_per_s.value, f.writes_per_s.value);
    if (f.read_mb_per_s.valid && f.write_mb_per_s.valid)
        line += format(", %.1f MB/s", f.read_mb_per_s.value + f.write_mb_per_s.value);
    if (f.read_await_ms.valid)
        line += format("; read await %.2f ms", f.read_await_ms.value);
    if (f.pg_read_latency_ms.valid)
        line += format(", PostgreSQL reads %.2f ms", f.pg_read_latency_ms.value);
    if (f.util_pct.valid)
        line += format("; util %.0f %%", f.util_pct.value);
    if (f.iops_limit.valid)
        line += format("; IOPS limit %.0f", f.iops_limit.value);
    if (f.throughput_limit_mb_per_s.valid)
        line += format("; MB/s limit %.1f", f.throughput_limit_mb_per_s.value);
    if ((f.iops_limit.valid || f.throughput_limit_mb_per_s.valid) && f.at_limit_pct.valid)
        line += format(" (%.0f %% of readings at it)", f.at_limit_pct.value);
    if (f.limit == StorageLimit::IopsCeiling || f.limit == StorageLimit::ThroughputCeiling)
        line += std::string(": at its ") +
                (f.limit == StorageLimit::IopsCeiling ? "IOPS" : "throughput") + " ceiling";
    return line;
}

}  // namespace pgsw
