// Device discovery, sampling and the device table. Discovery uses plain system calls (stat,
// readlink, /proc/self/mountinfo, the cgroup files) and may allocate (paths); it runs at worker
// start, at reload and on the rare tick that sees pg_tblspc change. A steady reading allocates
// nothing: one pread of /proc/diskstats into a buffer made at start, the wanted MAJ:MIN parsed
// (core/diskstats.hpp), deltas into the tick; or, when the host has many more devices than
// PostgreSQL uses, one pread of each device's /sys/dev/block/MAJ:MIN/stat (choose_source()).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/devices.hpp"
#include "core/diskstats.hpp"
#include "core/names.hpp"
#include "core/shared_state.hpp"
#include "core/tick_builder.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/devices.hpp"
#include "pg/module.hpp"

namespace pgsw::pg {

DeviceSettings device_settings = {0, 0, 0, 0};

namespace {

constexpr size_t kDiskstatsBuffer = 256 * 1024;  // ~2,500 devices' lines

struct Tracked {
    DiskId id;
    char kernel_name[kDiskNameMax] = {};
    int stat_fd = -1;  // /sys/dev/block/MAJ:MIN/stat, when read per device
    uint16_t name = 0;
    uint8_t roles = 0;
    DeviceLimits limits;
    DiskstatsDelta delta;
};

struct DeviceState {
    SharedView *shared = nullptr;
    NameWriter *names = nullptr;
    int fd = -1;
    bool open_failed_logged = false;
    std::vector<char> buffer;
    Tracked tracked[kMaxDevices];
    DiskId wanted[kMaxDevices];
    DiskReading readings[kMaxDevices];
    size_t count = 0;
    bool per_device = false;  // read each device's sysfs stat instead of /proc/diskstats
    int64_t last_reading_us = 0;
    bool rediscover = true;
    struct timespec tblspc_mtime = {};
    ino_t tblspc_ino = 0;
    int tblspc_fd = -1;  // pg_tblspc, kept open: fstat() skips the path walk of stat()
};

DeviceState *devices = nullptr;

int64_t monotonic_us() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

void copy_text(char *to, size_t size, const std::string &from) {
    snprintf(to, size, "%s", from.c_str());
}

// ---- discovery -----------------------------------------------------------------------------

struct Mount {
    unsigned major = 0, minor = 0;
    std::string point, fstype, source;
};

// /proc/self/mountinfo: "id parent MAJ:MIN root point options [tags] - fstype source super".
std::vector<Mount> read_mounts() {
    std::vector<Mount> mounts;
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string id, parent, dev, root, point, word;
        if (!(fields >> id >> parent >> dev >> root >> point))
            continue;
        while (fields >> word && word != "-") {
        }
        Mount m;
        if (sscanf(dev.c_str(), "%u:%u", &m.major, &m.minor) != 2 || !(fields >> m.fstype))
            continue;
        fields >> m.source;
        // Octal escapes (\040 for a space) as the kernel writes them.
        std::string unescaped;
        for (size_t i = 0; i < point.size(); ++i) {
            const bool octal = point[i] == '\\' && i + 3 < point.size() &&
                               std::all_of(point.begin() + long(i) + 1, point.begin() + long(i) + 4,
                                           [](char c) { return c >= '0' && c <= '7'; });
            if (octal) {
                unescaped += char((point[i + 1] - '0') * 64 + (point[i + 2] - '0') * 8 +
                                  (point[i + 3] - '0'));
                i += 3;
            } else {
                unescaped += point[i];
            }
        }
        m.point = unescaped;
        mounts.push_back(m);
    }
    return mounts;
}

bool under(const std::string &path, const std::string &point) {
    if (point == "/")
        return true;
    return path.compare(0, point.size(), point) == 0 &&
           (path.size() == point.size() || path[point.size()] == '/');
}

// The mount holding `real_path` (the longest mount point that is a prefix, later mounts over
// earlier ones).
const Mount *mount_of(const std::vector<Mount> &mounts, const std::string &real_path) {
    const Mount *best = nullptr;
    for (const Mount &m : mounts)
        if (under(real_path, m.point) && (!best || m.point.size() >= best->point.size()))
            best = &m;
    return best;
}

struct Found {
    bool block = false;
    unsigned major = 0, minor = 0;
    std::string name, mount_point, reason, path;
    uint8_t roles = 0;
    std::string tablespaces;  // OIDs, comma-separated (names are resolved by the readers)
};

// The kernel name of a block device: the last part of /sys/dev/block/MAJ:MIN's link.
bool block_name(unsigned major, unsigned minor, std::string &name) {
    char link[64], target[512];
    snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major, minor);
    const ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0)
        return false;
    target[n] = '\0';
    const char *slash = strrchr(target, '/');
    name = slash ? slash + 1 : target;
    return !name.empty() && name.size() < kDiskNameMax;
}

Found find_device(const std::string &path, const std::vector<Mount> &mounts) {
    Found f;
    f.path = path;
    struct stat st;
    if (stat(path.c_str(), &st) != 0) {
        f.reason = std::string("cannot stat ") + path + ": " + strerror(errno);
        return f;
    }
    char real[PATH_MAX];
    const std::string real_path = realpath(path.c_str(), real) ? std::string(real) : path;
    const Mount *m = mount_of(mounts, real_path);
    if (m)
        f.mount_point = m->point;
    f.major = major(st.st_dev), f.minor = minor(st.st_dev);
    // btrfs and other filesystems give files an anonymous device (major 0): the mount's
    // source names the block device.
    struct stat src;
    if (f.major == 0 && m && m->source.compare(0, 5, "/dev/") == 0 &&
        stat(m->source.c_str(), &src) == 0 && S_ISBLK(src.st_mode))
        f.major = major(src.st_rdev), f.minor = minor(src.st_rdev);
    if (block_name(f.major, f.minor, f.name)) {
        f.block = true;
        return f;
    }
    f.reason = "no block device: " + (m ? m->fstype + " (" + m->source + ")" : "unknown mount") +
               " at " + (m ? m->point : real_path);
    return f;
}

void add_found(std::vector<Found> &all, Found f, uint8_t role, const char *tablespace) {
    for (Found &g : all)
        if (g.block == f.block &&
            (f.block ? g.major == f.major && g.minor == f.minor : g.reason == f.reason)) {
            g.roles |= role;
            if (tablespace)
                g.tablespaces += (g.tablespaces.empty() ? "" : ",") + std::string(tablespace);
            return;
        }
    f.roles = role;
    if (tablespace)
        f.tablespaces = tablespace;
    all.push_back(f);
}

std::vector<Found> discover(const std::string &data_dir) {
    const std::vector<Mount> mounts = read_mounts();
    std::vector<Found> all;
    add_found(all, find_device(data_dir, mounts), kRoleData, nullptr);
    add_found(all, find_device(data_dir + "/pg_wal", mounts), kRoleWal, nullptr);
    if (DIR *dir = opendir((data_dir + "/pg_tblspc").c_str())) {
        while (dirent *e = readdir(dir)) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9')
                continue;
            add_found(all, find_device(data_dir + "/pg_tblspc/" + e->d_name, mounts),
                      kRoleTablespace, e->d_name);
        }
        closedir(dir);
    }
    return all;
}

// ---- limits from the server's own cgroup ---------------------------------------------------

// The value of "MAJ:MIN value" for this device in a blkio.throttle file, 0 when none.
double v1_rule(const std::string &file, unsigned major, unsigned minor) {
    std::ifstream in(file);
    unsigned ma, mi;
    double value;
    std::string line;
    while (std::getline(in, line))
        if (sscanf(line.c_str(), "%u:%u %lf", &ma, &mi, &value) == 3 && ma == major && mi == minor)
            return value;
    return 0;
}

// io.max (cgroup v2): "MAJ:MIN rbps=N wbps=max riops=N wiops=max".
void v2_rules(const std::string &file, unsigned major, unsigned minor, double out[4]) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
        unsigned ma, mi;
        if (sscanf(line.c_str(), "%u:%u", &ma, &mi) != 2 || ma != major || mi != minor)
            continue;
        const char *keys[4] = {"riops=", "wiops=", "rbps=", "wbps="};
        for (int k = 0; k < 4; ++k) {
            const size_t at = line.find(keys[k]);
            double v = 0;
            if (at != std::string::npos &&
                sscanf(line.c_str() + at + strlen(keys[k]), "%lf", &v) == 1)
                out[k] = out[k] > 0 ? std::min(out[k], v) : v;
        }
    }
}

// The tightest rule on the way from the server's cgroup up to the hierarchy's root.
void cgroup_limits(unsigned major, unsigned minor, DeviceLimits &l) {
    std::ifstream in("/proc/self/cgroup");
    std::string line, v1_path, v2_path;
    bool have_v2 = false;
    while (std::getline(in, line)) {
        const size_t a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos)
            continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (("," + controllers + ",").find(",blkio,") != std::string::npos)
            v1_path = path;
        if (line.compare(0, 2, "0:") == 0 && controllers.empty())
            v2_path = path, have_v2 = true;
    }
    double v[4] = {0, 0, 0, 0};  // read iops, write iops, read bytes/s, write bytes/s
    auto tighten = [&v](int k, double value) {
        if (value > 0)
            v[k] = v[k] > 0 ? std::min(v[k], value) : value;
    };
    if (!v1_path.empty()) {
        const std::string root = "/sys/fs/cgroup/blkio";
        for (std::string p = v1_path;; p = p.substr(0, p.rfind('/'))) {
            const std::string dir = root + (p == "/" ? "" : p) + "/blkio.throttle.";
            tighten(0, v1_rule(dir + "read_iops_device", major, minor));
            tighten(1, v1_rule(dir + "write_iops_device", major, minor));
            tighten(2, v1_rule(dir + "read_bps_device", major, minor));
            tighten(3, v1_rule(dir + "write_bps_device", major, minor));
            if (p.empty() || p == "/")
                break;
        }
    }
    if (have_v2)
        for (const char *root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"})
            for (std::string p = v2_path;; p = p.substr(0, p.rfind('/'))) {
                double w[4] = {0, 0, 0, 0};
                v2_rules(std::string(root) + (p == "/" ? "" : p) + "/io.max", major, minor, w);
                for (int k = 0; k < 4; ++k)
                    tighten(k, w[k]);
                if (p.empty() || p == "/")
                    break;
            }
    l.read_iops = v[0], l.write_iops = v[1];
    l.read_mb_per_s = v[2] / 1e6, l.write_mb_per_s = v[3] / 1e6;
}

DeviceLimits limits_for(const Found &f) {
    DeviceLimits l;
    const bool data = f.roles & (kRoleData | kRoleTablespace);
    const double iops = data ? device_settings.data_iops_limit : device_settings.wal_iops_limit;
    const double mbps = data ? device_settings.data_throughput_limit_mb_per_s
                             : device_settings.wal_throughput_limit_mb_per_s;
    if (iops > 0 || mbps > 0) {
        l.iops = iops, l.mb_per_s = mbps, l.from_setting = true;
        return l;
    }
    if (f.block)
        cgroup_limits(f.major, f.minor, l);
    return l;
}

// ---- the table -----------------------------------------------------------------------------

void publish_table(DeviceTable &table, const DeviceInfo *infos, uint32_t count) {
    const uint64_t generation = __atomic_load_n(&table.generation, __ATOMIC_RELAXED);
    __atomic_store_n(&table.generation, generation + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    std::memcpy(table.devices, infos, sizeof(DeviceInfo) * count);
    __atomic_store_n(&table.count, count, __ATOMIC_RELAXED);
    __atomic_store_n(&table.generation, generation + 2, __ATOMIC_RELEASE);
}

// Stat of pg_tblspc: a tablespace created or dropped changes its modification time. fstat()
// of the directory kept open costs ~0.4 us where stat() of its path costs ~1.1 us (each
// reading does it); the path is the fallback when the directory cannot be opened.
bool tablespaces_changed(const char *dir) {
    struct stat st;
    if (devices->tblspc_fd < 0)
        devices->tblspc_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (devices->tblspc_fd >= 0 ? fstat(devices->tblspc_fd, &st) != 0 : stat(dir, &st) != 0)
        return false;
    const bool changed = st.st_ino != devices->tblspc_ino ||
                         st.st_mtim.tv_sec != devices->tblspc_mtime.tv_sec ||
                         st.st_mtim.tv_nsec != devices->tblspc_mtime.tv_nsec;
    devices->tblspc_ino = st.st_ino;
    devices->tblspc_mtime = st.st_mtim;
    return changed;
}

// DataDir/pg_tblspc, made once.
const char *tablespace_dir() {
    static char path[MAXPGPATH];
    if (path[0] == '\0')
        snprintf(path, sizeof path, "%s/pg_tblspc", DataDir);
    return path;
}

// /proc/diskstats costs the kernel ~0.8-1.3 us per device on the host (it formats them all),
// a device's sysfs stat file ~1.8-3 us (quiet and loaded: BENCHMARKS.md section 7): read per
// device when PostgreSQL uses few of the host's devices.
constexpr double kSysfsCostRatio = 2.3;

void choose_source() {
    devices->per_device = false;
    if (devices->fd < 0 || devices->count == 0)
        return;
    const ssize_t n = pread(devices->fd, devices->buffer.data(), devices->buffer.size(), 0);
    const size_t lines =
        n > 0 ? diskstats_lines(std::string_view(devices->buffer.data(), size_t(n))) : 0;
    if (kSysfsCostRatio * double(devices->count) >= double(lines))
        return;
    bool all = true;
    for (size_t i = 0; i < devices->count; ++i) {
        Tracked &t = devices->tracked[i];
        char path[64];
        snprintf(path, sizeof path, "/sys/dev/block/%u:%u/stat", t.id.major, t.id.minor);
        t.stat_fd = open(path, O_RDONLY | O_CLOEXEC);
        all &= t.stat_fd >= 0;
    }
    devices->per_device = all;
}

// Each device's sysfs stat into readings[] (the kernel name from discovery).
void read_per_device() {
    for (size_t i = 0; i < devices->count; ++i) {
        Tracked &t = devices->tracked[i];
        DiskReading &r = devices->readings[i];
        r = DiskReading{};
        char text[512];
        const ssize_t n = pread(t.stat_fd, text, sizeof text - 1, 0);
        if (n <= 0 || !parse_device_stat(std::string_view(text, size_t(n)), r.counters))
            continue;  // gone (hot-removed): its baseline is dropped
        std::memcpy(r.name, t.kernel_name, sizeof r.name);
        r.found = true;
    }
}

void rediscover() {
    devices->rediscover = false;
    const std::vector<Found> found = discover(DataDir);
    DeviceInfo infos[kMaxDevices];
    std::memset(infos, 0, sizeof infos);
    uint32_t n = 0;
    Tracked previous[kMaxDevices];
    const size_t previous_count = devices->count;
    std::copy(devices->tracked, devices->tracked + previous_count, previous);
    for (size_t i = 0; i < previous_count; ++i)
        if (previous[i].stat_fd >= 0)
            close(previous[i].stat_fd);
    devices->count = 0;
    for (const Found &f : found) {
        if (n == kMaxDevices)
            break;
        DeviceInfo &info = infos[n++];
        info.roles = f.roles;
        info.major = f.major, info.minor = f.minor;
        copy_text(info.mount_point, sizeof info.mount_point, f.mount_point);
        copy_text(info.path, sizeof info.path, f.path);
        copy_text(info.tablespaces, sizeof info.tablespaces, f.tablespaces);
        if (!f.block) {
            copy_text(info.reason, sizeof info.reason, f.reason);
            continue;
        }
        const DeviceLimits limits = limits_for(f);
        info.name = devices->names->intern(NameKind::Device, f.name);
        info.iops_limit = limits.iops_shown();
        info.throughput_limit_mb_per_s = limits.mb_per_s_shown();
        info.limit_source = uint8_t(limits.from_setting ? LimitSource::Setting
                                    : limits.any()      ? LimitSource::Cgroup
                                                        : LimitSource::None);
        Tracked &t = devices->tracked[devices->count++];
        t = Tracked{};
        t.id = {f.major, f.minor};
        t.name = info.name, t.roles = f.roles, t.limits = limits;
        snprintf(t.kernel_name, sizeof t.kernel_name, "%s", f.name.c_str());
        for (size_t i = 0; i < previous_count; ++i)  // a device kept keeps its baseline
            if (previous[i].id.major == f.major && previous[i].id.minor == f.minor)
                t.delta = previous[i].delta;
        devices->wanted[devices->count - 1] = t.id;
    }
    publish_table(*devices->shared->devices, infos, n);
    choose_source();
}

uint32_t clamp32(uint64_t v) {
    return v > UINT32_MAX ? UINT32_MAX : uint32_t(v);
}

// One pread of the whole file; false (logged once) when it cannot be read.
bool read_diskstats(size_t &length) {
    if (devices->fd < 0)
        return false;
    const ssize_t n = pread(devices->fd, devices->buffer.data(), devices->buffer.size(), 0);
    if (n < 0) {
        if (!devices->open_failed_logged) {
            devices->open_failed_logged = true;
            const int err = errno;
            pg_call([err] {
                ereport(LOG, (errmsg("pg_storage_wait: cannot read /proc/diskstats: %s",
                                     strerror(err))));
            });
        }
        return false;
    }
    length = size_t(n);
    return true;
}

}  // namespace

void start_devices(SharedView &shared, NameWriter &names) {
    devices = new DeviceState;
    devices->shared = &shared;
    devices->names = &names;
    devices->buffer.resize(kDiskstatsBuffer);
    devices->fd = open("/proc/diskstats", O_RDONLY | O_CLOEXEC);
    if (devices->fd < 0) {
        const int err = errno;
        devices->open_failed_logged = true;
        pg_call([err] {
            ereport(LOG, (errmsg("pg_storage_wait: cannot open /proc/diskstats: %s; device "
                                 "figures are not recorded",
                                 strerror(err))));
        });
    }
    (void)tablespaces_changed(tablespace_dir());
    rediscover();
}

void devices_reload() {
    if (devices)
        devices->rediscover = true;
}

void sample_devices(TickBuilder &tick) {
    if (devices == nullptr)
        return;
    if (devices->rediscover || tablespaces_changed(tablespace_dir()))
        rediscover();
    size_t length = 0;
    const int64_t now = monotonic_us();
    if (devices->count == 0 || (!devices->per_device && !read_diskstats(length)))
        return;
    const double seconds =
        devices->last_reading_us ? double(now - devices->last_reading_us) / 1e6 : 0;
    devices->last_reading_us = now;
    if (devices->per_device)
        read_per_device();
    else
        parse_diskstats(std::string_view(devices->buffer.data(), length), devices->wanted,
                        devices->count, devices->readings);
    for (size_t i = 0; i < devices->count; ++i) {
        Tracked &t = devices->tracked[i];
        DiskDelta d;
        if (t.delta.update(devices->readings[i], d) != DeltaStatus::Ok || seconds <= 0)
            continue;
        const uint8_t flags = uint8_t((d.has_flushes ? 0 : kDeviceNoFlushFields) |
                                      (t.limits.any() ? kDeviceHasLimit : 0));
        const bool at_limit = t.limits.any() && reading_at_limit(d, seconds, t.limits);
        DeviceIoEntry io{EntryKind::DeviceIo, t.roles,           t.name,
                         clamp32(d.reads),    clamp32(d.writes), clamp32(d.flushes),
                         d.read_sectors,      d.write_sectors};
        DeviceTimeEntry time{EntryKind::DeviceTime,
                             flags,
                             t.name,
                             clamp32(d.read_ms),
                             clamp32(d.write_ms),
                             clamp32(d.flush_ms),
                             clamp32(d.io_ms),
                             clamp32(d.queue_ms),
                             1,
                             uint16_t(at_limit ? 1 : 0),
                             0};
        tick.add_device(io, time);
    }
}

DeviceTable read_device_table(const SharedView &shared) {
    DeviceTable copy;
    std::memset(&copy, 0, sizeof copy);
    const DeviceTable &table = *shared.devices;
    for (int attempt = 0; attempt < 100; ++attempt) {
        const uint64_t before = __atomic_load_n(&table.generation, __ATOMIC_ACQUIRE);
        if (before & 1)
            continue;
        const uint32_t count =
            std::min<uint32_t>(__atomic_load_n(&table.count, __ATOMIC_RELAXED), kMaxDevices);
        std::memcpy(copy.devices, table.devices, sizeof(DeviceInfo) * count);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&table.generation, __ATOMIC_RELAXED) == before) {
            copy.generation = before, copy.count = count;
            return copy;
        }
    }
    copy.count = 0;  // the sampler kept rewriting it: no table rather than a torn one
    return copy;
}

DeviceLimits table_limits(const DeviceTable &table, uint16_t device) {
    DeviceLimits l;
    for (uint32_t i = 0; i < table.count; ++i) {
        const DeviceInfo &info = table.devices[i];
        if (info.name != device || device == 0)
            continue;
        l.iops = info.iops_limit, l.mb_per_s = info.throughput_limit_mb_per_s;
        l.from_setting = info.limit_source == uint8_t(LimitSource::Setting);
    }
    return l;
}

StorageLimitFacts window_storage_limit(const SharedView &shared, const WindowPlan &plan) {
    const RingWindow records(shared.ticks, shared.rollups, plan);
    const DeviceTable table = read_device_table(shared);
    return storage_limit_facts(
        device_window(records), [&table](uint16_t d) { return table_limits(table, d); },
        [&shared](uint16_t d) { return name_of(*shared.names, d, NameKind::Device); });
}

}  // namespace pgsw::pg
