// The volume under PostgreSQL (issue 13): which block devices hold the data directory, pg_wal
// and the tablespaces (discovered at worker start, at reload and when pg_tblspc changes), their
// /proc/diskstats deltas at every tick that reads the I/O counters, the DeviceTable in shared
// memory, and the limits known for them (settings, the server's own cgroup rule).
// Include after pg_headers.hpp.
#pragma once

#include <string>
#include <vector>

#include "core/devices.hpp"
#include "core/names.hpp"
#include "core/shared_state.hpp"
#include "core/tick_builder.hpp"

namespace pgsw::pg {

// pg_storage_wait.{data,wal}_{iops,throughput}_limit: provisioned limits, 0 = unknown.
struct DeviceSettings {
    double data_iops_limit;
    double data_throughput_limit_mb_per_s;
    double wal_iops_limit;
    double wal_throughput_limit_mb_per_s;
};
extern DeviceSettings device_settings;

// The sampler's side (sampler.cpp calls these).
void start_devices(SharedView &shared, NameWriter &names);  // opens /proc/diskstats, discovers
void devices_reload();                                      // re-discover at the next reading
void sample_devices(TickBuilder &tick);                     // one reading (read_counters())

// The readers' side: a consistent copy of the device table (seqlock; retried).
DeviceTable read_device_table(const SharedView &shared);
// The known limits of a device (by name id) as the table has them.
DeviceLimits table_limits(const DeviceTable &table, uint16_t device);
// What the devices say about the volume's limit over a window (summary, breakdown).
StorageLimitFacts window_storage_limit(const SharedView &shared, const WindowPlan &plan);
// A device's roles as storage_device_stats shows them: "data", "wal", "tablespace:NAME".
std::vector<std::string> role_names(uint8_t roles, const char *tablespaces);

}  // namespace pgsw::pg
