// storage_probe_latency(): the opt-in probe's per-read latency percentiles per data and
// tablespace device over a window (core/probe.hpp), and why a device has none.
#include <cstdint>
#include <string>
#include <vector>

#include "core/names.hpp"
#include "core/probe.hpp"
#include "core/probe_table.hpp"
#include "core/shared_state.hpp"
#include "core/window.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/devices.hpp"
#include "pg/module.hpp"
#include "pg/probe.hpp"
#include "pg/sql_common.hpp"

namespace pgsw::pg {
namespace {

using Row = ResultSet::Row;

enum ProbeColumn : size_t {
    kDevice,
    kMountPoint,
    kRoles,
    kProbes,
    kP50,
    kP95,
    kP99,
    kP999,
    kMax,
    kProbeFile,
    kReason,
};

constexpr Column kProbeColumns[] = {
    {"device", TEXTOID},           {"mount_point", TEXTOID},
    {"roles", TEXTARRAYOID},       {"probes", INT8OID},
    {"latency_p50_ms", FLOAT8OID}, {"latency_p95_ms", FLOAT8OID},
    {"latency_p99_ms", FLOAT8OID}, {"latency_p999_ms", FLOAT8OID},
    {"latency_max_ms", FLOAT8OID}, {"probe_file", TEXTOID},
    {"reason", TEXTOID},
};

void roles_column(Row &row, const DeviceInfo *info) {
    if (info == nullptr) {
        row.null(kRoles);
        return;
    }
    const std::vector<std::string> names = role_names(info->roles, info->tablespaces);
    std::vector<const char *> items;
    for (const std::string &n : names)
        items.push_back(n.c_str());
    row.text_array(kRoles, items);
}

void latency_columns(Row &row, const LatencySummary &l) {
    if (!l.valid) {
        for (size_t c = kP50; c <= kMax; ++c)
            row.null(c);
        return;
    }
    row.float8(kP50, round_to(l.p50_us / 1000, 3));
    row.float8(kP95, round_to(l.p95_us / 1000, 3));
    row.float8(kP99, round_to(l.p99_us / 1000, 3));
    row.float8(kP999, round_to(l.p999_us / 1000, 3));
    row.float8(kMax, round_to(l.max_us / 1000, 3));
}

// The saver's slot for a device, if it has one.
const ProbeSlotView *slot_of(const std::vector<ProbeSlotView> &slots, const DeviceInfo &info) {
    for (const ProbeSlotView &s : slots)
        if (s.valid && s.state != ProbeState::Off && s.major == info.major && s.minor == info.minor)
            return &s;
    return nullptr;
}

struct Inputs {
    const SharedView *shared;
    DeviceTable table;
    std::vector<ProbeSlotView> slots;
    std::vector<ProbeDeviceWindow> windows;
    bool probe_on;
};

void put_row(ResultSet &result, const Inputs &in, const DeviceInfo *info,
             const ProbeDeviceWindow *window) {
    Row row = result.row();
    const uint16_t id = info ? info->name : window->device;
    const std::string name(name_of(*in.shared->names, id, NameKind::Device));
    row.text(kDevice, id != 0 ? (name.empty() ? "(other)" : name.c_str()) : nullptr);
    row.text(kMountPoint, info && info->mount_point[0] ? info->mount_point : nullptr);
    roles_column(row, info);
    row.int64(kProbes, window ? int64_t(window->probes + 0.5) : 0);
    latency_columns(row, window ? window->latency : LatencySummary{});
    const ProbeSlotView *slot = info ? slot_of(in.slots, *info) : nullptr;
    row.text(kProbeFile, slot && !slot->file.empty() ? slot->file.c_str() : nullptr);
    ProbeRowFacts facts;
    facts.block_device = info == nullptr || info->name != 0;
    facts.no_device_reason = info ? info->reason : "";
    facts.probes_in_window = window ? window->probes : 0;
    facts.probe_on = in.probe_on;
    facts.slot_found = slot != nullptr;
    if (slot != nullptr)
        facts.state = slot->state, facts.slot_reason = slot->reason;
    const std::string reason = probe_row_reason(facts);
    row.text(kReason, reason.empty() ? nullptr : reason.c_str());
    result.put(row);
}

}  // namespace
}  // namespace pgsw::pg

using namespace pgsw;
using namespace pgsw::pg;

PGSW_SQL_FUNCTION(storage_probe_latency) {
    const SharedView &shared = require_shared();
    const int64_t window_us = interval_argument_us(fcinfo, 0, "window");
    ResultSet result(fcinfo, kProbeColumns);
    const Window w = load_window(shared, window_us);
    Inputs in{&shared, read_device_table(shared), {}, probe_window(*w.records), false};
    for (const ProbeSlot &slot : shared.probes->slots)
        in.slots.push_back(read_probe_slot(slot));
    in.probe_on =
        probe_settings.enabled || __atomic_load_n(&shared.probes->enabled, __ATOMIC_RELAXED) != 0;
    // Every data and tablespace device the sampler knows, with its reads in the window.
    std::vector<uint16_t> shown;
    for (uint32_t i = 0; i < in.table.count; ++i) {
        const DeviceInfo &info = in.table.devices[i];
        if (!(info.roles & (kRoleData | kRoleTablespace)))
            continue;
        const ProbeDeviceWindow *window = nullptr;
        for (const ProbeDeviceWindow &d : in.windows)
            if (info.name != 0 && d.device == info.name)
                window = &d;
        put_row(result, in, &info, window);
        shown.push_back(info.name);
    }
    // Devices probed in the window that the table no longer lists (removed since).
    for (const ProbeDeviceWindow &d : in.windows) {
        bool seen = false;
        for (uint16_t id : shown)
            seen |= id == d.device;
        if (!seen)
            put_row(result, in, nullptr, &d);
    }
    return (Datum)0;
}
