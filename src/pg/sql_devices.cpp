// storage_device_stats(): the volume under PostgreSQL, one row per device over a window
// (core/devices.hpp has the arithmetic and the ceiling rule), plus a row with device NULL and
// a reason for each path without a block device (tmpfs, overlay).
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/devices.hpp"
#include "core/names.hpp"
#include "core/shared_state.hpp"
#include "core/window.hpp"

#include "pg/pg_headers.hpp"

extern "C" {
#include "commands/tablespace.h"
}

#include "pg/boundary.hpp"
#include "pg/devices.hpp"
#include "pg/module.hpp"
#include "pg/sql_common.hpp"

namespace pgsw::pg {
namespace {

using Row = ResultSet::Row;

enum DeviceColumn : size_t {
    kDevice,
    kMountPoint,
    kRoles,
    kReadsPerS,
    kWritesPerS,
    kReadMbPerS,
    kWriteMbPerS,
    kReadAwaitMs,
    kWriteAwaitMs,
    kFlushesPerS,
    kFlushAwaitMs,
    kQueueDepthAvg,
    kUtilPct,
    kIopsLimit,
    kThroughputLimit,
    kAtLimitPct,
    kPgReadLatencyMs,
    kReason,
};

constexpr Column kDeviceColumns[] = {
    {"device", TEXTOID},
    {"mount_point", TEXTOID},
    {"roles", TEXTARRAYOID},
    {"reads_per_s", FLOAT8OID},
    {"writes_per_s", FLOAT8OID},
    {"read_mb_per_s", FLOAT8OID},
    {"write_mb_per_s", FLOAT8OID},
    {"read_await_ms", FLOAT8OID},
    {"write_await_ms", FLOAT8OID},
    {"flushes_per_s", FLOAT8OID},
    {"flush_await_ms", FLOAT8OID},
    {"queue_depth_avg", FLOAT8OID},
    {"util_pct", FLOAT8OID},
    {"iops_limit", FLOAT8OID},
    {"throughput_limit_mb_per_s", FLOAT8OID},
    {"at_limit_pct", FLOAT8OID},
    {"pg_read_latency_ms", FLOAT8OID},
    {"reason", TEXTOID},
};

void figure(Row &row, size_t column, const Maybe &m, int digits) {
    m.valid ? row.float8(column, round_to(m.value, digits)) : row.null(column);
}

}  // namespace

// "data", "wal", "tablespace:NAME" (a tablespace's name from the catalog; its OID when it was
// dropped since).
std::vector<std::string> role_names(uint8_t roles, const char *tablespaces) {
    std::vector<std::string> names;
    if (roles & kRoleData)
        names.emplace_back("data");
    if (roles & kRoleWal)
        names.emplace_back("wal");
    std::string list = tablespaces ? tablespaces : "";
    size_t at = 0;
    while (at < list.size()) {
        size_t comma = list.find(',', at);
        if (comma == std::string::npos)
            comma = list.size();
        const std::string oid_text = list.substr(at, comma - at);
        at = comma + 1;
        const Oid oid = Oid(std::strtoul(oid_text.c_str(), nullptr, 10));
        const char *name = pg_call([oid] { return get_tablespace_name(oid); });
        names.push_back("tablespace:" + std::string(name ? name : oid_text.c_str()));
    }
    if (names.empty() && (roles & kRoleTablespace))
        names.emplace_back("tablespace");
    return names;
}

namespace {

void roles_column(Row &row, uint8_t roles, const char *tablespaces) {
    const std::vector<std::string> names = role_names(roles, tablespaces);
    std::vector<const char *> items;
    for (const std::string &n : names)
        items.push_back(n.c_str());
    row.text_array(kRoles, items);
}

void null_figures(Row &row) {
    for (size_t c = kReadsPerS; c <= kPgReadLatencyMs; ++c)
        row.null(c);
}

const DeviceInfo *info_of(const DeviceTable &table, uint16_t device) {
    for (uint32_t i = 0; i < table.count; ++i)
        if (table.devices[i].name == device && device != 0)
            return &table.devices[i];
    return nullptr;
}

void device_row(Row &row, const DeviceWindow &w, const DeviceFigures &f, const DeviceInfo *info,
                const SharedView &shared) {
    const std::string name(name_of(*shared.names, w.device, NameKind::Device));
    row.text(kDevice, name.empty() ? "(other)" : name.c_str());
    row.text(kMountPoint, info && info->mount_point[0] ? info->mount_point : nullptr);
    roles_column(row, info ? info->roles : w.roles, info ? info->tablespaces : "");
    figure(row, kReadsPerS, f.reads_per_s, 2);
    figure(row, kWritesPerS, f.writes_per_s, 2);
    figure(row, kReadMbPerS, f.read_mb_per_s, 3);
    figure(row, kWriteMbPerS, f.write_mb_per_s, 3);
    figure(row, kReadAwaitMs, f.read_await_ms, 3);
    figure(row, kWriteAwaitMs, f.write_await_ms, 3);
    figure(row, kFlushesPerS, f.flushes_per_s, 2);
    figure(row, kFlushAwaitMs, f.flush_await_ms, 3);
    figure(row, kQueueDepthAvg, f.queue_depth_avg, 2);
    figure(row, kUtilPct, f.util_pct, 1);
    figure(row, kIopsLimit, f.iops_limit, 1);
    figure(row, kThroughputLimit, f.throughput_limit_mb_per_s, 2);
    figure(row, kAtLimitPct, f.at_limit_pct, 1);
    figure(row, kPgReadLatencyMs, f.pg_read_latency_ms, 3);
    // The first reading's delta began before the window: a rate needs a second reading.
    row.text(kReason, w.seconds > 0 ? nullptr : "one reading in the window: rates need two");
}

}  // namespace
}  // namespace pgsw::pg

using namespace pgsw;
using namespace pgsw::pg;

PGSW_SQL_FUNCTION(storage_device_stats) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ResultSet result(fcinfo, kDeviceColumns);
    // Ticks, not the partial roll-up: the ceiling rule needs one reading per tick.
    const Window w = load_window(shared, window_us, PartialUse::TicksOnly);
    const DeviceTable table = read_device_table(shared);
    const DeviceWindowSet set = device_window(*w.records);
    std::vector<uint16_t> shown;
    for (const DeviceWindow &d : set.devices) {
        const DeviceFigures f = device_figures(d, table_limits(table, d.device));
        Row row = result.row();
        device_row(row, d, f, info_of(table, d.device), shared);
        result.put(row);
        shown.push_back(d.device);
    }
    // Discovered devices without readings in the window, and paths without a block device.
    for (uint32_t i = 0; i < table.count; ++i) {
        const DeviceInfo &info = table.devices[i];
        bool seen = false;
        for (uint16_t id : shown)
            seen |= info.name != 0 && id == info.name;
        if (seen)
            continue;
        Row row = result.row();
        const std::string name(name_of(*shared.names, info.name, NameKind::Device));
        row.text(kDevice, info.name != 0 && !name.empty() ? name.c_str() : nullptr);
        row.text(kMountPoint, info.mount_point[0] ? info.mount_point : nullptr);
        roles_column(row, info.roles, info.tablespaces);
        null_figures(row);
        if (info.name != 0) {
            DeviceLimits known = table_limits(table, info.name);
            known.iops_shown() > 0 ? row.float8(kIopsLimit, known.iops_shown())
                                   : row.null(kIopsLimit);
            known.mb_per_s_shown() > 0 ? row.float8(kThroughputLimit, known.mb_per_s_shown())
                                       : row.null(kThroughputLimit);
        }
        row.text(kReason, info.name != 0 ? "no reading in the window yet" : info.reason);
        result.put(row);
    }
    return (Datum)0;
}
