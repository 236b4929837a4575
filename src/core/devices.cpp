#include "core/devices.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "core/rollup.hpp"

namespace pgsw {
namespace {

constexpr double kSectorBytes = 512;

double record_seconds(const IntervalRecord &r) noexcept {
    if (r.ticks == 1 && (r.flags & kFlagBaseline))
        return 0;
    return double(r.end_us - r.start_us) / 1e6;
}

double mb(double sectors) noexcept {
    return sectors * kSectorBytes / 1e6;
}

Maybe some(double v) noexcept {
    return {true, v};
}

Maybe ratio(double num, double den) noexcept {
    return den > 0 ? some(num / den) : Maybe{};
}

// The variances of two series of log values.
struct LogMoments {
    double n = 0, sx = 0, sxx = 0, sy = 0, syy = 0;
    void add(double x, double y) noexcept { n += 1, sx += x, sxx += x * x, sy += y, syy += y * y; }
    double var_x() const noexcept { return n > 1 ? std::max(0.0, sxx / n - sx * sx / n / n) : 0; }
    double var_y() const noexcept { return n > 1 ? std::max(0.0, syy / n - sy * sy / n / n) : 0; }
};

// What the readings say about one rate (IOPS or MB/s): flat, and not following the reads in
// flight (C = IOPS x PostgreSQL latency).
struct RateShape {
    size_t readings = 0;
    double log_spread = 1;    // standard deviation of log(rate)
    double spread_ratio = 1;  // sd log rate / sd log C
    double level = 0;         // mean rate
};

// The readings on the plateau: within 15 % of the median rate. A window's first and last
// readings are often partial (the load started or stopped inside them) and would otherwise
// hide a flat rate; a plateau of fewer than 80 % of the readings with I/O is no plateau.
constexpr double kPlateauLog = 0.15;
constexpr double kPlateauShare = 0.8;

// The rate series a limit can pin: all operations or reads alone (a cgroup or hypervisor rule
// may throttle reads only, while unthrottled writes vary), bytes likewise.
enum class Series : uint8_t { Ops, Reads, Bytes, ReadBytes };

double rate_of(const DeviceReading &r, Series series) noexcept {
    switch (series) {
        case Series::Ops:
            return r.iops;
        case Series::Reads:
            return r.read_iops;
        case Series::Bytes:
            return r.mb_per_s;
        case Series::ReadBytes:
            return r.read_mb_per_s;
    }
    return 0;
}

bool is_bytes(Series series) noexcept {
    return series == Series::Bytes || series == Series::ReadBytes;
}

RateShape shape_of(const std::vector<DeviceReading> &readings, Series series) {
    std::vector<double> logs;
    for (const DeviceReading &r : readings) {
        const double rate = rate_of(r, series);
        if (rate > 0 && r.pg_read_latency_ms > 0)
            logs.push_back(std::log(rate));
    }
    RateShape s;
    if (logs.empty())
        return s;
    std::vector<double> sorted = logs;
    std::nth_element(sorted.begin(), sorted.begin() + long(sorted.size() / 2), sorted.end());
    const double median = sorted[sorted.size() / 2];
    LogMoments m;  // x: log rate, y: log C (rate x latency, in the rate's unit)
    double sum = 0;
    for (const DeviceReading &r : readings) {
        const double rate = rate_of(r, series);
        if (rate <= 0 || r.pg_read_latency_ms <= 0)
            continue;
        const double x = std::log(rate);
        if (std::fabs(x - median) > kPlateauLog)
            continue;
        m.add(x, x + std::log(r.pg_read_latency_ms));
        sum += rate;
    }
    if (m.n < kPlateauShare * double(logs.size()))
        return s;
    s.readings = size_t(m.n);
    s.level = sum / m.n;
    s.log_spread = std::sqrt(m.var_x());
    // The spread ratio, not a least-squares slope: in a steady closed loop both series vary by
    // parts per thousand, and a slope over a dozen readings is then mostly the noise of their
    // covariance. Bound by latency, log IOPS = log C - log latency, so its spread is at least
    // C's (>= 1 unless the latency grows with C, which is a queue); under a ceiling the rate
    // is pinned and the latency carries C's spread (near 0). Both flat to rounding: no evidence.
    const double var_c = m.var_y();
    s.spread_ratio = var_c > 1e-12 ? std::sqrt(m.var_x() / var_c) : 1;
    return s;
}

bool queue_visible(const DeviceFigures &f) noexcept {
    const bool gap = f.pg_read_latency_ms.valid && f.read_await_ms.valid &&
                     f.pg_read_latency_ms.value >= kQueueLatencyRatio * f.read_await_ms.value &&
                     f.pg_read_latency_ms.value > 0;
    const bool device_queue =
        f.queue_depth_avg.valid && f.queue_depth_avg.value >= kQueueDepthCeiling;
    return gap || device_queue;
}

bool is_ceiling(const RateShape &s, bool queue) noexcept {
    return queue && s.readings >= kMinCeilingReadings && s.log_spread <= kFlatLogSpread &&
           s.spread_ratio <= kCeilingSpreadRatio;
}

double share_at(const std::vector<DeviceReading> &readings, Series series, double ceiling) {
    size_t n = 0, at = 0;
    for (const DeviceReading &r : readings) {
        if (r.seconds <= 0)
            continue;
        ++n;
        at += rate_of(r, series) >= kAtLimitFraction * ceiling;
    }
    return n ? 100.0 * double(at) / double(n) : 0;
}

// A known limit: which one the device ran into (the nearer, over the window).
void known_ceiling(const DeviceWindow &w, double seconds, const DeviceLimits &known,
                   DeviceFigures &f) {
    f.ceiling_known = true;
    f.ceiling_from_setting = known.from_setting;
    const double iops = known.iops_shown(), mbps = known.mb_per_s_shown();
    if (iops > 0)
        f.iops_limit = some(iops);
    if (mbps > 0)
        f.throughput_limit_mb_per_s = some(mbps);
    f.at_limit_pct = ratio(100.0 * double(w.ticks_at_limit), double(w.ticks));
    if (!f.at_limit_pct.valid || f.at_limit_pct.value < kCeilingAtLimitPct)
        return;
    const LimitRatios r =
        limit_ratios(w.reads, w.writes, w.read_sectors, w.write_sectors, seconds, known);
    f.limit = r.throughput > r.iops ? StorageLimit::ThroughputCeiling : StorageLimit::IopsCeiling;
}

void detected_ceiling(const DeviceWindow &w, DeviceFigures &f) {
    const bool queue = queue_visible(f);
    const Series all[] = {Series::Ops, Series::Reads, Series::Bytes, Series::ReadBytes};
    RateShape shapes[4];
    int ops = -1, bytes = -1;  // the flattest qualifying series of each kind
    for (int i = 0; i < 4; ++i) {
        shapes[i] = shape_of(w.readings, all[i]);
        if (!is_ceiling(shapes[i], queue))
            continue;
        int &best = is_bytes(all[i]) ? bytes : ops;
        if (best < 0 || shapes[i].log_spread < shapes[best].log_spread)
            best = i;
    }
    if (ops < 0 && bytes < 0)
        return;
    bool throughput = bytes >= 0 && (ops < 0 || shapes[bytes].log_spread < shapes[ops].log_spread);
    if (ops >= 0 && bytes >= 0 &&
        std::fabs(shapes[bytes].log_spread - shapes[ops].log_spread) <= 0.01) {
        const double ios = double(w.reads + w.writes);
        const double request_bytes =
            ios > 0 ? double(w.read_sectors + w.write_sectors) * kSectorBytes / ios : 0;
        throughput = request_bytes >= kLargeRequestBytes;
    }
    const int chosen = throughput ? bytes : ops;
    const RateShape &s = shapes[chosen];
    f.limit = throughput ? StorageLimit::ThroughputCeiling : StorageLimit::IopsCeiling;
    (throughput ? f.throughput_limit_mb_per_s : f.iops_limit) = some(s.level);
    f.at_limit_pct = some(share_at(w.readings, all[chosen], s.level));
}

}  // namespace

double DeviceLimits::iops_shown() const noexcept {
    if (iops > 0)
        return iops;
    if (read_iops > 0 && write_iops > 0)
        return read_iops + write_iops;
    return std::max(read_iops, write_iops);
}

double DeviceLimits::mb_per_s_shown() const noexcept {
    if (mb_per_s > 0)
        return mb_per_s;
    if (read_mb_per_s > 0 && write_mb_per_s > 0)
        return read_mb_per_s + write_mb_per_s;
    return std::max(read_mb_per_s, write_mb_per_s);
}

LimitRatios limit_ratios(uint64_t reads, uint64_t writes, uint64_t read_sectors,
                         uint64_t write_sectors, double seconds, const DeviceLimits &l) noexcept {
    LimitRatios r;
    if (seconds <= 0)
        return r;
    const double rps = double(reads) / seconds, wps = double(writes) / seconds;
    const double rmb = mb(double(read_sectors)) / seconds,
                 wmb = mb(double(write_sectors)) / seconds;
    auto near = [](double &to, double value, double limit) {
        if (limit > 0)
            to = std::max(to, value / limit);
    };
    near(r.iops, rps + wps, l.iops);
    near(r.iops, rps, l.read_iops);
    near(r.iops, wps, l.write_iops);
    near(r.throughput, rmb + wmb, l.mb_per_s);
    near(r.throughput, rmb, l.read_mb_per_s);
    near(r.throughput, wmb, l.write_mb_per_s);
    return r;
}

bool reading_at_limit(const DiskDelta &d, double seconds, const DeviceLimits &limits) noexcept {
    const LimitRatios r =
        limit_ratios(d.reads, d.writes, d.read_sectors, d.write_sectors, seconds, limits);
    return r.iops >= kAtLimitFraction || r.throughput >= kAtLimitFraction;
}

DeviceWindowSet device_window(const RecordSource &records) {
    DeviceWindowSet set;
    std::vector<double> pending;  // seconds since each device's previous reading
    auto find = [&set, &pending](uint16_t device) -> size_t {
        for (size_t i = 0; i < set.devices.size(); ++i)
            if (set.devices[i].device == device)
                return i;
        set.devices.emplace_back();
        set.devices.back().device = device;
        pending.push_back(0);
        return set.devices.size() - 1;
    };
    records.for_each(kDeviceEntries, [&](const RecordCopy &c, bool) {
        const IntervalRecord &r = c.record;
        const double seconds = record_seconds(r);
        for (double &p : pending)
            p += seconds;
        const double pg_latency_ms =
            r.reads > 0 && r.read_time_us > 0 ? double(r.read_time_us) / double(r.reads) / 1e3 : 0;
        for (size_t i = 0; i + 1 < c.entries.size(); ++i) {
            const ArenaEntry &e = c.entries[i];
            if (e.kind != EntryKind::DeviceIo || c.entries[i + 1].kind != EntryKind::DeviceTime)
                continue;
            const DeviceIoEntry &io = e.device_io;
            const DeviceTimeEntry &t = c.entries[i + 1].device_time;
            const size_t devices_before = set.devices.size();
            const size_t at = find(io.device);
            const bool first = set.devices.size() > devices_before;
            DeviceWindow &w = set.devices[at];
            w.roles |= io.roles, w.flags |= t.flags;
            // The first reading's delta began at the reading before it, which may lie before
            // the window (up to one io_read_interval): it only starts the device's clock.
            const double s = pending[at];
            pending[at] = 0;
            if (first)
                continue;
            w.seconds += s;
            w.reads += io.reads, w.writes += io.writes, w.flushes += io.flushes;
            w.read_sectors += io.read_sectors, w.write_sectors += io.write_sectors;
            w.read_ms += t.read_ms, w.write_ms += t.write_ms, w.flush_ms += t.flush_ms;
            w.busy_ms += t.busy_ms, w.queue_ms += t.queue_ms;
            w.ticks += t.ticks, w.ticks_at_limit += t.ticks_at_limit;
            w.pg_reads += r.reads, w.pg_read_time_us += r.read_time_us;
            if (s <= 0)
                continue;
            const double rmb = mb(double(io.read_sectors)) / s,
                         wmb = mb(double(io.write_sectors)) / s;
            w.readings.push_back({s, double(io.reads + io.writes) / s, rmb + wmb, pg_latency_ms,
                                  double(io.reads) / s, double(io.writes) / s, rmb, wmb});
        }
    });
    return set;
}

DeviceFigures device_figures(const DeviceWindow &w, const DeviceLimits &known) {
    DeviceFigures f;
    const double seconds = w.seconds;
    if (seconds > 0) {
        f.reads_per_s = some(double(w.reads) / seconds);
        f.writes_per_s = some(double(w.writes) / seconds);
        f.read_mb_per_s = some(mb(double(w.read_sectors)) / seconds);
        f.write_mb_per_s = some(mb(double(w.write_sectors)) / seconds);
        f.util_pct = some(std::min(100.0, double(w.busy_ms) / (seconds * 10.0)));
        f.queue_depth_avg = some(double(w.queue_ms) / (seconds * 1000.0));
        if (!(w.flags & kDeviceNoFlushFields))
            f.flushes_per_s = some(double(w.flushes) / seconds);
    }
    f.read_await_ms = ratio(double(w.read_ms), double(w.reads));
    f.write_await_ms = ratio(double(w.write_ms), double(w.writes));
    if (!(w.flags & kDeviceNoFlushFields))
        f.flush_await_ms = ratio(double(w.flush_ms), double(w.flushes));
    if (w.roles & (kRoleData | kRoleTablespace))
        f.pg_read_latency_ms = ratio(double(w.pg_read_time_us) / 1e3, double(w.pg_reads));
    if (known.any())
        known_ceiling(w, seconds, known, f);
    else
        detected_ceiling(w, f);
    if (f.limit == StorageLimit::Unknown && w.reads + w.writes > 0)
        f.limit = StorageLimit::Latency;
    return f;
}

// Data devices before WAL-only ones, a ceiling before latency, more readings at it first.
int limit_rank(const DeviceWindow &w, const DeviceFigures &f) noexcept {
    if (f.limit == StorageLimit::Unknown)
        return 0;
    const bool data = (w.roles & (kRoleData | kRoleTablespace)) != 0;
    const bool ceiling = f.limit != StorageLimit::Latency;
    const int at = f.at_limit_pct.valid ? int(std::lround(f.at_limit_pct.value)) : 0;
    if (ceiling)
        return (data ? 4000 : 3000) + at;
    return data ? 2000 : 1000;
}

StorageLimitFacts facts_of(const DeviceWindow &w, const DeviceFigures &f, std::string name) {
    StorageLimitFacts facts;
    facts.limit = f.limit;
    facts.device = std::move(name);
    const bool throughput = f.limit == StorageLimit::ThroughputCeiling;
    facts.measured = throughput ? f.read_mb_per_s.value + f.write_mb_per_s.value
                                : f.reads_per_s.value + f.writes_per_s.value;
    const Maybe &ceiling = throughput ? f.throughput_limit_mb_per_s : f.iops_limit;
    facts.ceiling = ceiling.valid ? ceiling.value : 0;
    facts.ceiling_from_setting = f.ceiling_from_setting;
    facts.ceiling_from_cgroup = f.ceiling_known && !f.ceiling_from_setting;
    facts.at_limit_pct = f.at_limit_pct.valid ? f.at_limit_pct.value : 0;
    facts.device_await_ms = f.read_await_ms.valid ? f.read_await_ms.value : -1;
    facts.pg_read_latency_ms = f.pg_read_latency_ms.valid ? f.pg_read_latency_ms.value : -1;
    (void)w;
    return facts;
}

std::vector<DeviceHistoryRow> device_history(const RecordSource &records, int64_t resolution_us) {
    std::vector<DeviceHistoryRow> rows;
    double pending_seconds = 0;
    bool clock_started = false;
    records.for_each(kDeviceEntries, [&](const RecordCopy &c, bool rollup) {
        const IntervalRecord &r = c.record;
        const int64_t time_us =  // the buckets of history() (window.hpp)
            resolution_us > 0 ? history_bucket_us(r.end_us, rollup, resolution_us) : r.end_us;
        if (rows.empty() || rows.back().sample_time_us != time_us || resolution_us == 0)
            rows.push_back(DeviceHistoryRow{time_us});
        DeviceHistoryRow &row = rows.back();
        // A device delta covers the time since the previous reading (io_read_interval may
        // span several ticks): a row's rates divide by that time, not by its own ticks'.
        pending_seconds += record_seconds(r);
        bool read_here = false;
        for (const ArenaEntry &e : c.entries)
            read_here |= e.kind == EntryKind::DeviceIo;
        if (read_here && !clock_started) {
            // The first delta began at a reading before the window: it starts the clock only.
            clock_started = true, pending_seconds = 0;
            return;
        }
        if (read_here)
            row.seconds += pending_seconds, pending_seconds = 0;
        for (const ArenaEntry &e : c.entries) {
            if (e.kind != EntryKind::DeviceIo)
                continue;
            const DeviceIoEntry &io = e.device_io;
            const double ios = double(io.reads) + double(io.writes);
            const double bytes = double(io.read_sectors + io.write_sectors) * kSectorBytes;
            if (io.roles & kRoleData)
                row.data_seen = true, row.data_ios += ios, row.data_bytes += bytes;
            if (io.roles & kRoleWal)
                row.wal_seen = true, row.wal_ios += ios, row.wal_bytes += bytes;
        }
    });
    return rows;
}

}  // namespace pgsw
