#include "core/probe.hpp"

#include <algorithm>
#include <cstring>

#include "core/probe_file.hpp"

namespace pgsw {
namespace {

template <typename T>
T load(const T &field, int order = __ATOMIC_RELAXED) noexcept {
    return __atomic_load_n(&field, order);
}
template <typename T>
void store(T &field, T value, int order = __ATOMIC_RELAXED) noexcept {
    __atomic_store_n(&field, value, order);
}

void copy_text(char (&to)[kProbeTextBytes], std::string_view from) noexcept {
    const size_t n = std::min(from.size(), kProbeTextBytes - 1);
    std::memcpy(to, from.data(), n);
    std::memset(to + n, 0, kProbeTextBytes - n);
}

// The writer's seqlock: odd while the identity is rewritten.
void begin_write(ProbeSlot &slot) noexcept {
    store(slot.generation, load(slot.generation) + 1);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}
void end_write(ProbeSlot &slot) noexcept {
    store(slot.generation, load(slot.generation) + 1, __ATOMIC_RELEASE);
}

}  // namespace

// ---- the writer -------------------------------------------------------------------------------

void probe_slot_assign(ProbeSlot &slot, uint32_t major, uint32_t minor, ProbeState state,
                       std::string_view file, std::string_view reason) noexcept {
    begin_write(slot);
    store(slot.epoch, load(slot.epoch) + 1);
    store(slot.major, major);
    store(slot.minor, minor);
    store(slot.state, static_cast<uint32_t>(state));
    for (uint64_t &bin : slot.bins)
        store(bin, uint64_t{0});
    store(slot.probes, uint64_t{0});
    store(slot.failures, uint64_t{0});
    copy_text(slot.file, file);
    copy_text(slot.reason, reason);
    end_write(slot);
}

void probe_slot_update(ProbeSlot &slot, ProbeState state, std::string_view reason) noexcept {
    begin_write(slot);
    store(slot.state, static_cast<uint32_t>(state));
    copy_text(slot.reason, reason);
    end_write(slot);
}

void probe_slot_record(ProbeSlot &slot, double latency_us) noexcept {
    uint64_t &bin = slot.bins[latency_bin(latency_us)];
    store(bin, load(bin) + 1);
    store(slot.probes, load(slot.probes) + 1, __ATOMIC_RELEASE);
}

void probe_slot_failure(ProbeSlot &slot, std::string_view reason) noexcept {
    begin_write(slot);
    copy_text(slot.reason, reason);
    store(slot.failures, load(slot.failures) + 1);
    end_write(slot);
}

// ---- readers ----------------------------------------------------------------------------------

ProbeSlotView read_probe_slot(const ProbeSlot &slot) {
    ProbeSlotView v;
    char file[kProbeTextBytes], reason[kProbeTextBytes];
    for (int attempt = 0; attempt < 100; ++attempt) {
        const uint64_t before = load(slot.generation, __ATOMIC_ACQUIRE);
        if (before & 1)
            continue;
        v.epoch = load(slot.epoch);
        v.major = load(slot.major), v.minor = load(slot.minor);
        v.state = static_cast<ProbeState>(load(slot.state));
        v.probes = load(slot.probes), v.failures = load(slot.failures);
        for (size_t i = 0; i < kProbeTextBytes; ++i)
            file[i] = load(slot.file[i]), reason[i] = load(slot.reason[i]);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (load(slot.generation) != before)
            continue;
        file[kProbeTextBytes - 1] = reason[kProbeTextBytes - 1] = '\0';
        v.file = file, v.reason = reason;
        v.valid = v.epoch != 0;
        return v;
    }
    return ProbeSlotView{};
}

// ---- the sampler's collector ------------------------------------------------------------------

bool ProbeCollector::moved(const ProbeSlot &slot, size_t index) noexcept {
    Seen &seen = seen_[index];
    const uint64_t before = load(slot.generation, __ATOMIC_ACQUIRE);
    if (before & 1)
        return false;  // being rewritten: the next reading takes it
    const uint64_t epoch = load(slot.epoch);
    const uint64_t probes = load(slot.probes, __ATOMIC_ACQUIRE);
    if (seen.known && seen.epoch == epoch && seen.probes == probes)
        return false;  // the common case: two loads and a compare
    for (size_t b = 0; b < kProbeBinCount; ++b)
        copy_[b] = load(slot.bins[b]);
    copy_major_ = load(slot.major), copy_minor_ = load(slot.minor);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (load(slot.generation) != before)
        return false;  // reassigned meanwhile: the next reading takes it
    copy_epoch_ = epoch, copy_probes_ = probes;
    if (!seen.known) {
        // The sampler's first sight (its start): reads made before are not this run's.
        seen.known = true, seen.epoch = epoch, seen.probes = probes;
        std::memcpy(seen.bins, copy_, sizeof copy_);
        return false;
    }
    if (seen.epoch != epoch) {
        // Another device (or the saver restarted): its counts started from 0.
        seen.epoch = epoch;
        std::memset(seen.bins, 0, sizeof seen.bins);
    }
    return true;
}

void ProbeCollector::record(size_t index, uint16_t device, TickBuilder &tick) noexcept {
    Seen &seen = seen_[index];
    bool all_recorded = true;
    for (size_t b = 0; b < kProbeBinCount; ++b) {
        if (copy_[b] <= seen.bins[b])
            continue;
        // An unknown device's reads are dropped; a bin the tick has no room for waits.
        if (device != 0 && !tick.add_probe_bin(device, uint8_t(b), copy_[b] - seen.bins[b])) {
            all_recorded = false;
            continue;
        }
        seen.bins[b] = copy_[b];
    }
    if (all_recorded)
        seen.probes = copy_probes_;
}

// ---- windows ----------------------------------------------------------------------------------

LatencySummary latency_of_bins(const double (&weights)[kProbeBinCount]) {
    LatencyAccumulator acc(kProbeBinCount);
    for (size_t b = 0; b < kProbeBinCount; ++b)
        if (weights[b] > 0)
            acc.add_weighted_point(latency_bin_mid_us(uint8_t(b)), weights[b]);
    return acc.summary();
}

std::vector<ProbeDeviceWindow> probe_window(const RecordSource &records) {
    struct Device {
        uint16_t id;
        double weights[kProbeBinCount];
    };
    std::vector<Device> devices;
    records.for_each(kLatencyBinEntries, [&](const RecordCopy &c, bool) {
        for (const ArenaEntry &e : c.entries) {
            if (e.kind != EntryKind::LatencyBin || e.bin.series != LatencySeries::Probe ||
                !(e.bin.weight > 0))
                continue;
            auto it = std::find_if(devices.begin(), devices.end(),
                                   [&](const Device &d) { return d.id == e.bin.device; });
            if (it == devices.end()) {
                devices.push_back(Device{e.bin.device, {}});
                it = devices.end() - 1;
            }
            it->weights[e.bin.bin] += e.bin.weight;
        }
    });
    std::vector<ProbeDeviceWindow> out;
    for (const Device &d : devices) {
        ProbeDeviceWindow w;
        w.device = d.id;
        w.latency = latency_of_bins(d.weights);
        w.probes = w.latency.total_count;
        out.push_back(w);
    }
    return out;
}

std::string probe_row_reason(const ProbeRowFacts &f) {
    if (!f.block_device)
        return f.no_device_reason +
               ": nothing to probe (a read there would time memory or "
               "another layer, not a device)";
    if (f.probes_in_window > 0)
        return "";
    if (!f.probe_on)
        return "pg_storage_wait.probe is off";
    if (f.slot_found && (f.state == ProbeState::Refused || f.state == ProbeState::Failed))
        return f.slot_reason;
    if (f.slot_found && f.state == ProbeState::Preparing)
        return "writing the probe file (" + std::to_string(kProbeFileBytes >> 20) +
               " MB) before the first read";
    if (f.slot_found && f.state == ProbeState::Probing && !f.slot_reason.empty())
        return f.slot_reason;  // every read failed: the last error
    return "no probe read in the window yet";
}

}  // namespace pgsw
