// The probe (probe.hpp): the history saver does the reads, the sampler records the counts.
//
// Why the saver and not the sampler: an O_DIRECT read can take tens of milliseconds under a
// throttle (50 ms at a 300-IOPS cgroup rule), longer than a 10 ms tick; the saver may be slow
// without delaying a sample, and it is already there (no extra process or worker slot). A
// history save (a few hundred ms at the defaults) delays the next probe round by that much; a
// round does not delay a save by more than its reads. With the probe off the saver does nothing
// new (it removes the probe files once, at start or when the setting turns off) and the
// sampler's whole cost is one test of the setting per counter reading.
//
// Where the files go (kept out of base backups where PostgreSQL allows):
//  * the data directory's device: pg_stat_tmp/pg_storage_wait.probe (pg_basebackup copies
//    pg_stat_tmp empty); when pg_stat_tmp is another file system (a symlink to tmpfs, as some
//    set stats_temp_directory up before 15), pgsql_tmp_pg_storage_wait.probe in the data
//    directory (pg_basebackup skips files named pgsql_tmp* in every directory);
//  * a tablespace's device: pg_storage_wait.probe in the tablespace's directory (the target of
//    pg_tblspc/OID), beside the PG_NN_CATVERSION directory: pg_basebackup copies only that
//    directory, and DROP TABLESPACE, which refuses to remove a version directory holding a
//    foreign file, only empties that directory. DROP TABLESPACE leaves the tablespace's
//    directory in place, and the probe file with it until the saver notices the device gone.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "core/names.hpp"
#include "core/probe.hpp"
#include "core/probe_file.hpp"
#include "core/probe_table.hpp"
#include "core/shared_state.hpp"
#include "core/tick_builder.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/devices.hpp"
#include "pg/module.hpp"
#include "pg/probe.hpp"

namespace pgsw::pg {

ProbeSettings probe_settings = {false, 1000};

namespace {

constexpr const char *kProbeFileName = "pg_storage_wait.probe";
constexpr const char *kRootProbeFileName = "pgsql_tmp_pg_storage_wait.probe";

struct Target {
    bool used = false;
    uint32_t major = 0, minor = 0;
    ProbeState state = ProbeState::Off;
    ProbeFile file;
};

struct ProbeWorker {
    Target targets[kMaxProbeSlots];
    uint64_t devices_generation = UINT64_MAX;  // the DeviceTable the targets were planned from
    bool active = false;                       // probing (the setting on)
    int64_t next_round_ms = 0;
    uint64_t rng = 1;
};

ProbeWorker *worker = nullptr;
ProbeCollector *collector = nullptr;

int64_t monotonic_ms() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

void log_line(const std::string &message) {
    const char *text = message.c_str();
    pg_call([text] { ereport(LOG, (errmsg("pg_storage_wait: %s", text))); });
}

bool stop_requested() {
    return ShutdownRequestPending;
}

// ---- where the probe files go ---------------------------------------------------------------

bool same_file_system(const std::string &a, const std::string &b) {
    struct stat sa, sb;
    return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev;
}

std::string data_probe_path() {
    const std::string data(DataDir);
    const std::string stat_tmp = data + "/" PG_STAT_TMP_DIR;
    if (same_file_system(stat_tmp, data))
        return stat_tmp + "/" + kProbeFileName;
    return data + "/" + kRootProbeFileName;
}

// The tablespace's directory (pg_tblspc/OID's target), or "" when it cannot be resolved.
std::string tablespace_probe_path(const std::string &oid) {
    char real[PATH_MAX];
    const std::string link = std::string(DataDir) + "/pg_tblspc/" + oid;
    if (realpath(link.c_str(), real) == nullptr)
        return "";
    return std::string(real) + "/" + kProbeFileName;
}

std::string probe_path_for(const DeviceInfo &info) {
    if (info.roles & kRoleData)
        return data_probe_path();
    const std::string list(info.tablespaces, strnlen(info.tablespaces, sizeof info.tablespaces));
    const std::string first = list.substr(0, list.find(','));
    return first.empty() ? "" : tablespace_probe_path(first);
}

// Every place a probe file of this server can be, for the removal when the probe is off.
std::vector<std::string> every_probe_path() {
    const std::string data(DataDir);
    std::vector<std::string> paths = {data + "/" PG_STAT_TMP_DIR "/" + kProbeFileName,
                                      data + "/" + kRootProbeFileName};
    if (DIR *dir = opendir((data + "/pg_tblspc").c_str())) {
        while (dirent *e = readdir(dir))
            if (e->d_name[0] >= '0' && e->d_name[0] <= '9') {
                const std::string path = tablespace_probe_path(e->d_name);
                if (!path.empty())
                    paths.push_back(path);
            }
        closedir(dir);
    }
    return paths;
}

void remove_probe_file(const std::string &path, const char *why) {
    for (const std::string &p : {path, path + ".tmp"})
        if (unlink(p.c_str()) == 0)
            log_line("removed the probe file " + p + " (" + why + ")");
}

// ---- the saver's targets --------------------------------------------------------------------

void publish_count(SharedView &shared, size_t index) {
    uint64_t &count = shared.probes->count;
    if (__atomic_load_n(&count, __ATOMIC_RELAXED) < index + 1)
        __atomic_store_n(&count, uint64_t(index + 1), __ATOMIC_RELEASE);
}

// Opens the probe file of a device newly given slot `index`, creating it the first time.
void prepare(SharedView &shared, size_t index, const DeviceInfo &info) {
    Target &t = worker->targets[index];
    ProbeSlot &slot = shared.probes->slots[index];
    t.used = true, t.major = info.major, t.minor = info.minor;
    const std::string device(name_of(*shared.names, info.name, NameKind::Device));
    const std::string path = probe_path_for(info);
    if (path.empty()) {
        t.state = ProbeState::Failed;
        probe_slot_assign(slot, info.major, info.minor, t.state, "",
                          "no directory found for a probe file on " + device);
        publish_count(shared, index);
        return;
    }
    probe_slot_assign(slot, info.major, info.minor, ProbeState::Preparing, path,
                      "opening or creating the probe file");
    publish_count(shared, index);
    const ProbeOpenResult r = t.file.open_or_create(path, kProbeFileBytes, stop_requested);
    t.state = r.ok ? ProbeState::Probing : r.refused ? ProbeState::Refused : ProbeState::Failed;
    probe_slot_update(slot, t.state, r.reason);
    if (r.ok && r.created)
        log_line("created the probe file " + path + " (" + std::to_string(kProbeFileBytes >> 20) +
                 " MB) on " + device);
    else if (!r.ok)
        log_line("the probe cannot read " + device + ": " + r.reason);
}

// Frees slot `index` (a new epoch, state Off); `remove` deletes its file.
void release(SharedView &shared, size_t index, bool remove) {
    Target &t = worker->targets[index];
    const std::string path = t.file.path();
    t.file.close();
    if (remove && !path.empty())
        remove_probe_file(path, "its device no longer holds data or a tablespace");
    t.used = false, t.major = t.minor = 0, t.state = ProbeState::Off;
    probe_slot_assign(shared.probes->slots[index], 0, 0, ProbeState::Off, "", "");
}

int find_target(uint32_t major, uint32_t minor) {
    for (size_t i = 0; i < kMaxProbeSlots; ++i) {
        const Target &t = worker->targets[i];
        if (t.used && t.major == major && t.minor == minor)
            return int(i);
    }
    return -1;
}

bool probed(const DeviceInfo &info) {
    return info.name != 0 && (info.roles & (kRoleData | kRoleTablespace));
}

// The targets follow the device table (the sampler rediscovers at reload and when a
// tablespace appears): a device kept keeps its open file; a device gone loses its file.
void sync_targets(SharedView &shared) {
    const uint64_t generation = __atomic_load_n(&shared.devices->generation, __ATOMIC_ACQUIRE);
    if (generation == worker->devices_generation || (generation & 1))
        return;
    const DeviceTable table = read_device_table(shared);
    if (table.generation != generation)
        return;  // rewritten meanwhile: the next round plans
    worker->devices_generation = generation;
    bool kept[kMaxProbeSlots] = {};
    for (uint32_t i = 0; i < table.count; ++i)
        if (probed(table.devices[i])) {
            const int at = find_target(table.devices[i].major, table.devices[i].minor);
            if (at >= 0)
                kept[at] = true;
        }
    for (size_t i = 0; i < kMaxProbeSlots; ++i)
        if (worker->targets[i].used && !kept[i])
            release(shared, i, true);
    for (uint32_t i = 0; i < table.count; ++i) {
        const DeviceInfo &info = table.devices[i];
        if (!probed(info) || find_target(info.major, info.minor) >= 0)
            continue;
        for (size_t s = 0; s < kMaxProbeSlots; ++s)
            if (!worker->targets[s].used) {
                prepare(shared, s, info);
                break;
            }
    }
}

void probe_round(SharedView &shared) {
    for (size_t i = 0; i < kMaxProbeSlots; ++i) {
        Target &t = worker->targets[i];
        if (!t.used || t.state != ProbeState::Probing)
            continue;
        const ProbeReadResult r = t.file.read_random(worker->rng);
        ProbeSlot &slot = shared.probes->slots[i];
        if (r.ok)
            probe_slot_record(slot, r.latency_us);
        else
            probe_slot_failure(
                slot, probe_error_reason("the last probe read failed on", t.file.path(), r.error));
    }
}

// The probe turned off (or found off at start): no file, no read.
void deactivate(SharedView &shared) {
    for (size_t i = 0; i < kMaxProbeSlots; ++i)
        if (worker->targets[i].used)
            release(shared, i, false);
    __atomic_store_n(&shared.probes->enabled, uint64_t{0}, __ATOMIC_RELAXED);
    for (const std::string &path : every_probe_path())
        remove_probe_file(path, "pg_storage_wait.probe is off");
    worker->active = false;
    worker->devices_generation = UINT64_MAX;
}

}  // namespace

void define_probe_settings() {
    DefineCustomBoolVariable(
        "pg_storage_wait.probe",
        "Time one random 8 kB O_DIRECT read per probe_interval on each data and tablespace "
        "device.",
        "The reads come from a 256 MB file the history saver writes once per device "
        "(pg_stat_tmp, or the tablespace's directory); storage_probe_latency() gives their "
        "per-read percentiles. Off: no file, no read.",
        &probe_settings.enabled, false, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pg_storage_wait.probe_interval", "Time between two probe reads of a device.",
        "Each read is one I/O on the device: at 1 s, one read per second per device.",
        &probe_settings.interval_ms, 1000, 10, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr,
        nullptr, nullptr);
}

void probe_worker_start(SharedView &shared) {
    worker = new ProbeWorker;
    worker->rng = (uint64_t(MyProcPid) << 32) ^ uint64_t(GetCurrentTimestamp()) ^ 1;
    // A previous saver's slots (it restarted; shared memory stayed): a new epoch each.
    const uint64_t count = __atomic_load_n(&shared.probes->count, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < count && i < kMaxProbeSlots; ++i)
        probe_slot_assign(shared.probes->slots[i], 0, 0, ProbeState::Off, "", "");
    if (!probe_settings.enabled)
        deactivate(shared);
}

int64_t probe_worker_due(SharedView &shared) {
    if (!probe_settings.enabled)
        return INT64_MAX;
    if (!worker->active) {
        worker->active = true;
        worker->next_round_ms = monotonic_ms();
        __atomic_store_n(&shared.probes->enabled, uint64_t{1}, __ATOMIC_RELAXED);
    }
    sync_targets(shared);  // one load when the devices did not change
    const int64_t now = monotonic_ms();
    if (now >= worker->next_round_ms) {
        probe_round(shared);
        worker->next_round_ms += probe_settings.interval_ms;
        if (worker->next_round_ms <= now)  // rounds missed (a save, a slow read) are skipped
            worker->next_round_ms = now + probe_settings.interval_ms;
    }
    return std::max<int64_t>(0, worker->next_round_ms - monotonic_ms());
}

void probe_worker_reload(SharedView &shared) {
    if (!probe_settings.enabled) {
        if (worker->active)
            deactivate(shared);
        return;
    }
    // Devices that could not be probed are tried again (fixed permissions, freed space).
    for (size_t i = 0; i < kMaxProbeSlots; ++i) {
        const ProbeState s = worker->targets[i].state;
        if (worker->targets[i].used && (s == ProbeState::Refused || s == ProbeState::Failed))
            release(shared, i, false);
    }
    worker->devices_generation = UINT64_MAX;
    worker->next_round_ms =
        std::min(worker->next_round_ms, monotonic_ms() + int64_t{probe_settings.interval_ms});
}

void start_probe_collector() {
    // Made when the probe is first on (at start or at a reload, never in a tick): off, the
    // sampler holds none of its ~33 kB.
    if (probe_settings.enabled && collector == nullptr)
        collector = new ProbeCollector;
}

void sample_probes(SharedView &shared, TickBuilder &tick) {
    if (!probe_settings.enabled || collector == nullptr)
        return;
    // The sampler writes the device table itself: its own reads of it cannot be torn.
    const DeviceTable &table = *shared.devices;
    collector->collect(
        *shared.probes,
        [&table](uint32_t major, uint32_t minor) -> uint16_t {
            for (uint32_t i = 0; i < table.count && i < kMaxDevices; ++i)
                if (table.devices[i].major == major && table.devices[i].minor == minor)
                    return table.devices[i].name;
            return 0;
        },
        tick);
}

}  // namespace pgsw::pg
