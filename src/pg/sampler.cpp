// The sampler: a background worker without a database connection that, every
// pg_storage_wait.sample_interval, records every live process's wait event and the change of
// pg_stat_io / WAL counters into the tick ring, and folds ticks into one-minute roll-ups.
//
// The tick reads PGPROC.wait_event_info (one 4-byte store by its owner: no lock) and the
// BackendStatusArray entries through their changecount protocol (no lock), and the tracked
// pg_stat_io cells (io_counters.cpp: one shared LWLock per backend type, as pgstat takes). It takes
// no heavyweight lock and allocates nothing: every buffer is made in start_sampler(). The loop
// keeps no C++ object with a destructor on its stack: the state lives in memory this process
// owns until it exits (make_tick_memory()).
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <memory_resource>
#include <string>
#include <vector>

#include "core/cpu_times.hpp"
#include "core/devices.hpp"
#include "core/names.hpp"
#include "core/rollup.hpp"
#include "core/rseq_release.hpp"
#include "core/sampler_clock.hpp"
#include "core/sampler_policy.hpp"
#include "core/shared_state.hpp"
#include "core/tick_builder.hpp"
#include "core/wait_class.hpp"

#include "pg/pg_headers.hpp"

#include "pg/boundary.hpp"
#include "pg/compat.hpp"
#include "pg/database_counters.hpp"
#include "pg/devices.hpp"
#include "pg/io_counters.hpp"
#include "pg/module.hpp"
#include "pg/probe.hpp"
#include "pg/server_state.hpp"

namespace pgsw::pg {
namespace {

struct WaitInfoHash {
    size_t operator()(uint32_t k) const noexcept { return mix64(k); }
};
struct PidHash {
    size_t operator()(int k) const noexcept { return mix64(static_cast<uint64_t>(k)); }
};

// A wait event's classification, cached per wait_event_info, and what the records store for
// it (a custom wait event: kCustomWaitEventClass | its name's dictionary id).
struct WaitFacts {
    WaitCategory category;
    WaitRole role;
    StorageKind storage_kind;
    uint32_t stored_info;
};

// The tick's private working memory in one 2 MB region that the kernel may back with a single
// huge page (MADV_HUGEPAGE: honoured when transparent huge pages are "madvise" or "always").
// Spread over 4 kB pages, each tick paid a TLB miss per page after every sleep, and a miss is
// costly under virtualisation. Past 2 MB (~7,000 process slots) allocations go to the heap.
constexpr size_t kTickMemoryBytes = size_t{2} << 20;

std::pmr::memory_resource *make_tick_memory() {
    void *region = std::aligned_alloc(kTickMemoryBytes, kTickMemoryBytes);
    if (region == nullptr)
        return std::pmr::new_delete_resource();
    (void)madvise(region, kTickMemoryBytes, MADV_HUGEPAGE);
    return new std::pmr::monotonic_buffer_resource(region, kTickMemoryBytes,
                                                   std::pmr::new_delete_resource());
}

struct SamplerState {
    // `tick_memory` holds what every tick touches: this object, the tick's tables and the
    // proc array copy. The roll-up, touched once a second, and the rarely read caches do not.
    SamplerState(size_t max_procs, std::pmr::memory_resource *tick_memory, NameDictionary &dict)
        : tick(max_procs, tick_memory),
          rollup(4 * max_procs + 256, 4 * max_procs + 256),
          wait_facts(4096),
          status_slot_by_pid(max_procs + 1, tick_memory),
          procnos(tick_memory),
          names(dict) {}
    TickBuilder tick;
    IoDeltaTracker io;
    RollupBuilder rollup;
    FixedMap<uint32_t, WaitFacts, WaitInfoHash> wait_facts;
    RecentValues<uint32_t, WaitFacts, 16> recent_wait_facts;  // searched first: see classify()
    FixedMap<int, int, PidHash> status_slot_by_pid;           // 16 only
    std::vector<IoCellSource> io_cells;
    SamplerClock clock;              // wall and monotonic time into tick times (sampler_clock.hpp)
    RollupPolicy *policy = nullptr;  // fold, partial, replay, reset (sampler_policy.hpp)
    std::pmr::vector<int> procnos;   // a copy of the proc array's entries (sample_proc_array)
    int ticks_until_counters_read = 0;  // 0: read pg_stat_io / WAL counters at the next tick
    uint32_t setting_flags = 0;         // server_flags()'s settings, as of the last reload
    bool in_recovery = true;            // until RecoveryInProgress() says otherwise, for good
    NameWriter names;                   // devices, slots, custom wait events
    DatabaseCounters databases;
    ProcStatReader proc_stat;  // the machine's CPU (the what-if's CPU cap)
    CpuDeltas cpu{static_cast<uint64_t>(sysconf(_SC_CLK_TCK))};
    ServerState server;                    // checkpointer, WAL position, autovacuum cap, slots
    MemoryContext tick_context = nullptr;  // what PostgreSQL's fetch functions palloc, per reading
};

SamplerState *state = nullptr;
volatile PgBackendStatus *backend_status = nullptr;
Size backend_status_count = 0;
// The proc array, when its layout is the one compat.hpp mirrors; else nullptr (walk every slot).
const volatile compat::ProcArrayLayout *proc_array = nullptr;
// Fixed once the server is up, copied at start: a tick then reads none of the server's own
// globals for them (in 17's build, ProcGlobal and MyProc on one page of its data and
// MaxBackends on another: each a TLB miss per tick after the sleep), nor PROC_HDR's line.
volatile PGPROC *all_procs = nullptr;  // ProcGlobal->allProcs
uint32 all_proc_count = 0;             // ProcGlobal->allProcCount
uint32 first_auxiliary_proc = 0;       // compat::first_auxiliary_proc()
const PGPROC *own_proc = nullptr;      // MyProc

PGSW_TICK_PATH int64_t monotonic_us() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

// GetCurrentTimestamp()'s value, read through the libc entry and vDSO page monotonic_us() has
// just touched: after each 10-ms sleep those lines are cold, and GetCurrentTimestamp() would
// add two more (the postgres binary's code page, gettimeofday's). Same clock, same epoch.
PGSW_TICK_PATH TimestampTz wall_clock_now() {
    constexpr int64_t kUnixToPostgresEpochS =
        int64_t{POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE} * SECS_PER_DAY;
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t{ts.tv_sec} - kUnixToPostgresEpochS) * USECS_PER_SEC + ts.tv_nsec / 1000;
}

// ---- wait events ---------------------------------------------------------------------------

// A custom wait event's name (17+), looked up once per event: the lookup takes a lock and
// raises ERRCODE_INTERNAL_ERROR for an id nobody registered, which is then named "Extension".
uint32_t store_custom_wait_event(uint32 wait_event_info) {
    const char *name = nullptr;
    try {
        name = pg_call([wait_event_info] { return pgstat_get_wait_event(wait_event_info); });
    } catch (const PgErrorThrown &e) {
        if (e.data->sqlerrcode != ERRCODE_INTERNAL_ERROR)
            throw;
    }
    const uint16_t id = state->names.intern(NameKind::WaitEvent, name ? name : "Extension");
    return id != 0 ? kCustomWaitEventClass | id : wait_event_info;
}

WaitFacts classify_uncached(uint32 wait_event_info) {
    if (wait_event_info == 0)
        return {WaitCategory::Cpu, WaitRole::None, StorageKind::None, 0};
    const uint32 wait_class = wait_event_info & 0xFF000000;
    // The generic Extension:Extension is, for a background worker, a sleep on its latch.
    if (wait_event_info == PG_WAIT_EXTENSION)
        return {WaitCategory::Other, WaitRole::ExtensionGeneric, StorageKind::None,
                wait_event_info};
    if (wait_class == PG_WAIT_EXTENSION)
        return {WaitCategory::Other, WaitRole::None, StorageKind::None,
                store_custom_wait_event(wait_event_info)};
    if (compat::is_injection_point_class(wait_class))
        return {WaitCategory::Other, WaitRole::None, StorageKind::None, wait_event_info};
    const char *type =
        pg_call([wait_event_info] { return pgstat_get_wait_event_type(wait_event_info); });
    const char *event =
        pg_call([wait_event_info] { return pgstat_get_wait_event(wait_event_info); });
    type = type ? type : "";
    event = event ? event : "";
    const WaitClass wc = classify_wait_class(type, event);
    return {wc.category, wait_role(type, event), wc.kind, wait_event_info};
}

// The 8,192-slot cache puts each wait event on a line of its own, cold at every tick at short
// intervals; the few events of a tick are found among the 16 recent ones first.
PGSW_TICK_PATH WaitFacts classify(uint32 wait_event_info) {
    if (const WaitFacts *recent = state->recent_wait_facts.find(wait_event_info))
        return *recent;
    WaitFacts facts;
    if (const WaitFacts *known = state->wait_facts.find(wait_event_info)) {
        facts = *known;
    } else {
        facts = classify_uncached(wait_event_info);
        if (WaitFacts *slot = state->wait_facts.find_or_insert(wait_event_info))
            *slot = facts;
    }
    state->recent_wait_facts.remember(wait_event_info, facts);
    return facts;
}

// ---- process samples -----------------------------------------------------------------------

struct StatusFields {
    BackendType backend_type;
    BackendState state;
    Oid database;
    int64 query_id;
    int pid;
};

// Copy one BackendStatusArray entry consistently (its changecount protocol); false when empty
// or when the owner kept rewriting it.
PGSW_TICK_PATH bool read_status(int slot, StatusFields &out) {
    volatile PgBackendStatus *entry = &backend_status[slot];
    for (int attempt = 0; attempt < 8; ++attempt) {
        int before, after;
        pgstat_begin_read_activity(entry, before);
        out.pid = entry->st_procpid;
        out.backend_type = entry->st_backendType;
        out.state = entry->st_state;
        out.database = entry->st_databaseid;
        // The query id is on another cache line and counts only for running foreground
        // processes (is_foreground_active; a parallel worker's state is undefined): an idle
        // session or an auxiliary process costs one line less.
        const bool may_count = out.state == STATE_RUNNING || out.state == STATE_FASTPATH ||
                               (out.state == STATE_UNDEFINED && out.backend_type == B_BG_WORKER);
        out.query_id = may_count ? static_cast<int64>(entry->st_query_id) : 0;
        pgstat_end_read_activity(entry, after);
        if (pgstat_read_activity_complete(before, after))
            return out.pid > 0;
    }
    return false;
}

PGSW_TICK_PATH void index_status_slots_by_pid() {
    state->status_slot_by_pid.clear();
    for (Size slot = 0; slot < backend_status_count; ++slot) {
        const int pid = backend_status[slot].st_procpid;
        if (pid <= 0)
            continue;
        if (int *value = state->status_slot_by_pid.find_or_insert(pid))
            *value = int(slot);
    }
}

PGSW_TICK_PATH int status_slot(uint32 proc_index, int pid) {
    const int slot = compat::status_slot_of_proc(proc_index, backend_status_count);
    if (slot >= 0)
        return slot;
    const int *found = state->status_slot_by_pid.find(pid);
    return found ? *found : -1;
}

PGSW_TICK_PATH void sample_process(uint32 index) {
    volatile PGPROC *proc = &all_procs[index];
    if (proc == own_proc || !compat::proc_is_live(proc))
        return;
    const int pid = proc->pid;
    const uint32 wait_event_info = proc->wait_event_info;
    const int slot = status_slot(index, pid);
    StatusFields status{};
    // A process can own a PGPROC before its status entry exists: skip it this tick.
    if (slot < 0 || !read_status(slot, status) || status.pid != pid)
        return;
    BackendKind kind = compat::backend_kind(status.backend_type);
    // lockGroupLeader is one more cache line: read it only where it can matter.
    if (kind == BackendKind::BackgroundWorker) {
        PGPROC *leader = proc->lockGroupLeader;
        if (leader != nullptr && leader != proc)
            kind = BackendKind::ParallelWorker;
    }
    const WaitFacts facts = classify(wait_event_info);
    state->databases.note(status.database);
    state->tick.add_sample({kind, compat::backend_state(status.state), facts.category,
                            facts.stored_info, status.database, status.query_id, facts.role,
                            facts.storage_kind});
}

// Ask for a process's lines before the walk reads them: its PGPROC's pid and wait event (two
// lines apart) and, where the slot is known without reading the pid (17+), its status entry's
// first line and its state. The walk branches on every value it loads, so the CPU does not run
// ahead by itself: without this each cold line is a stall of its own, one after another.
PGSW_TICK_PATH void prefetch_process(uint32 index) {
    const volatile PGPROC *proc = &all_procs[index];
    __builtin_prefetch(const_cast<const int *>(&proc->pid));
    __builtin_prefetch(const_cast<const uint32 *>(&proc->wait_event_info));
    const int slot = compat::status_slot_of_proc(index, backend_status_count);
    if (slot < 0)
        return;
    const volatile PgBackendStatus *entry = &backend_status[slot];
    __builtin_prefetch(const_cast<const int *>(&entry->st_changecount));
    __builtin_prefetch(const_cast<const BackendState *>(&entry->st_state));
}

// The regular processes from the proc array, read without ProcArrayLock: a process joining or
// leaving shifts the entries while they are copied, so a copy can repeat one (dropped: the
// array is ascending) or miss one for this tick. Every entry copied is a valid slot index.
PGSW_TICK_PATH void sample_proc_array() {
    std::pmr::vector<int> &procnos = state->procnos;
    const int published = proc_array->numProcs;
    const int count = std::clamp(published, 0, static_cast<int>(procnos.size()));
    for (int i = 0; i < count; ++i)
        procnos[i] = proc_array->pgprocnos[i];
    const int regular_end = static_cast<int>(first_auxiliary_proc);
    for (int i = 0; i < count; ++i)
        if (procnos[i] >= 0 && procnos[i] < regular_end)
            prefetch_process(static_cast<uint32>(procnos[i]));
    int previous = -1;
    for (int i = 0; i < count; ++i) {
        const int index = procnos[i];
        if (index <= previous || index >= regular_end)
            continue;  // a repeat, or a prepared transaction's placeholder
        previous = index;
        sample_process(static_cast<uint32>(index));
    }
}

// Live processes are a few of the slots (max_connections, autovacuum, workers, walsenders):
// walking the proc array touches only theirs, where the walk over every slot costs one cold
// cache line per slot.
PGSW_TICK_PATH void sample_processes() {
    if (compat::status_slot_of_proc(0, backend_status_count) < 0)
        index_status_slots_by_pid();
    const uint32 count = all_proc_count;
    uint32 index = 0;
    if (proc_array != nullptr) {
        index = first_auxiliary_proc;
        for (uint32 aux = index; aux < count; ++aux)  // a few slots, most of them live
            prefetch_process(aux);
        sample_proc_array();
    }
    for (; index < count; ++index)
        sample_process(index);
}

// ---- the tick ------------------------------------------------------------------------------

// The settings change in this process only when it reloads its configuration.
uint32_t read_setting_flags() {
    uint32_t flags = 0;
    if (track_io_timing)
        flags |= kFlagTrackIoTiming;
    if (track_wal_io_timing)
        flags |= kFlagTrackWalIoTiming;
    return flags;
}

// Recovery ends once and never comes back while this worker lives (RecoveryInProgress() caches
// it the same way; a crash restart starts a new worker): on a primary, server_flags() then
// calls nothing in PostgreSQL, whose code and data pages are cold after every sleep.
PGSW_TICK_PATH uint32_t server_flags() {
    if (state->in_recovery)
        state->in_recovery = RecoveryInProgress();
    return state->setting_flags | (state->in_recovery ? uint32_t{kFlagInRecovery} : 0u);
}

// The tick's roll-up policy (core/sampler_policy.hpp), with the reset time it needs and the
// truncated roll-ups it counts.
PGSW_TICK_PATH void fold_and_publish_partial(SharedView &shared, int64_t tick_end_us,
                                             size_t tick_entries) {
    const uint64_t truncated = state->policy->rollups_truncated();
    state->policy->after_tick(tick_end_us, tick_entries,
                              status_load(shared.status->history_reset_us));
    if (const uint64_t added = state->policy->rollups_truncated() - truncated)
        status_store(shared.status->rollups_truncated,
                     status_load(shared.status->rollups_truncated) + added);
}

PGSW_TICK_PATH void update_status(SamplerStatus &status, const IntervalRecord &tick,
                                  uint64_t missed) {
    status_store(status.ticks, status_load(status.ticks) + 1);
    status_store(status.overruns, status_load(status.overruns) + missed);
    status_store(status.tick_cost_total_us,
                 status_load(status.tick_cost_total_us) + tick.tick_cost_us);
    if (tick.tick_cost_us > status_load(status.tick_cost_max_us))
        status_store(status.tick_cost_max_us, uint64_t{tick.tick_cost_us});
    status_store(status.last_tick_us, tick.end_us);
    uint64_t flags = tick.flags;
    // A tick that skips the counters keeps the source they were last read from.
    if (flags & kFlagCountersNotRead)
        flags |=
            status_load(status.last_tick_flags) & (kFlagWalFromPgStatWal | kFlagWalFromPgStatIo);
    status_store(status.last_tick_flags, flags);
    if (tick.flags & kFlagCountersReset)
        status_store(status.counter_resets, status_load(status.counter_resets) + 1);
    if (tick.flags & kFlagEntriesTruncated)
        status_store(status.ticks_truncated, status_load(status.ticks_truncated) + 1);
    if (!(tick.flags & kFlagCountersNotRead)) {  // they change only when counters are read
        status_store(status.db_counter_resets, uint64_t(state->databases.resets()));
        status_store(status.databases_tracked, uint64_t(state->databases.tracked()));
    }
}

// pg_storage_wait.io_read_interval in ticks: backends publish their pg_stat_io counters at
// most once a second (PGSTAT_MIN_INTERVAL), so a 10 ms tick reading them all costs CPU for
// nothing; a tick that skips them leaves its I/O to the next reading's deltas.
int counters_read_every_ticks() {
    const int interval = settings.sample_interval_ms;
    return std::max(1, (settings.io_read_interval_ms + interval / 2) / interval);
}

// The cumulative counters: pg_stat_io / WAL, and the databases' transactions and tuples.
// Once per io_read_interval: kept out of the tick's hot code (PGSW_TICK_PATH).
[[gnu::noinline]] void read_counters(SharedView &shared, TickBuilder &tick, int64_t now) {
    pg_call([] { read_io_counters(state->io_cells, state->io); });
    tick.record().flags |= state->io.update(tick);
    sample_devices(tick);         // the same intervals as the I/O counters (pg/devices.hpp)
    sample_probes(shared, tick);  // the probe's reads since the last reading (pg/probe.hpp)
    tick.add_databases(pg_call([now] { return state->databases.read(state->tick_context, now); }));
    state->server.read(tick, state->names, state->tick_context);
    if (const std::optional<CpuTimes> cpu = state->proc_stat.read()) {
        const CpuDeltas::Delta d = state->cpu.observe(*cpu);
        if (d.valid)
            tick.add_cpu(d.busy_us, d.total_us);
    }
}

// A wall-clock step is rare and worth a line in the log: sample times slew or jump (see
// sampler_clock.hpp), rates do not.
[[gnu::cold]] void log_clock_step(int64_t step_us) {
    const double seconds = double(step_us) / 1e6;
    pg_call([seconds] {
        ereport(LOG, (errmsg("pg_storage_wait: the wall clock stepped %s by %.1f s",
                             seconds < 0 ? "back" : "forward", seconds < 0 ? -seconds : seconds),
                      errdetail(seconds < 0 ? "Sample times advance at half speed until the clock "
                                              "meets them; rates use the monotonic clock."
                                            : "The step is a gap in sample times; rates use the "
                                              "monotonic clock.")));
    });
}

// `started`: the monotonic time the loop just read to decide the tick is due.
PGSW_TICK_PATH void run_tick(SharedView &shared, uint64_t missed, int64_t started) {
    const TickTimes times = state->clock.tick(wall_clock_now(), started);
    const TimestampTz now = times.end_us;
    // The lines this tick writes last, requested now (Ring::prefetch_next_append).
    shared.ticks.prefetch_next_append();
    __builtin_prefetch(&shared.status->ticks, 1);
    __builtin_prefetch(&shared.status->last_tick_flags, 1);
    TickBuilder &tick = state->tick;
    tick.begin(times.start_us, times.end_us,
               server_flags() | (missed ? uint32_t{kFlagOverrun} : 0u));
    tick.record().seq_end_us = times.seq_end_us;
    tick.record().elapsed_us = times.elapsed_us;
    sample_processes();
    if (state->ticks_until_counters_read <= 0) {
        read_counters(shared, tick, now);
        state->ticks_until_counters_read = counters_read_every_ticks() - 1;
    } else {
        tick.record().flags |= kFlagCountersNotRead;
        --state->ticks_until_counters_read;
    }
    tick.finish(static_cast<uint32_t>(monotonic_us() - started));
    const auto &entries = tick.entries();
    shared.ticks.append(tick.record(), entries.data(), entries.size());
    fold_and_publish_partial(shared, tick.record().end_us, entries.size());
    update_status(*shared.status, tick.record(), missed);
    if (times.step_us != 0)
        log_clock_step(times.step_us);
}

// Ticks already in the ring but not yet in a roll-up (the worker restarted, or the server did
// and restored its history): fold them again so no minute is lost or counted twice.
void replay_unrolled_ticks(SharedView &shared) {
    state->policy->replay_unrolled(status_load(shared.status->history_reset_us));
}

// The clocks start after the newest record in the rings (restored history, or the previous
// worker's ticks): tick times and the sampler timeline never go back across restarts.
void start_clock(SharedView &shared) {
    int64_t newest_end = 0, newest_seq = 0;
    IntervalRecord r{};
    for (const Ring *ring : {&shared.ticks, &shared.rollups}) {
        const uint64_t end = ring->end();
        if (end > ring->first_readable() && ring->read_record(end - 1, r) == ReadStatus::Ok) {
            newest_end = std::max(newest_end, r.end_us);
            newest_seq = std::max(newest_seq, r.seq_end_us);
        }
    }
    state->clock.start(GetCurrentTimestamp(), monotonic_us(), newest_end, newest_seq);
}

// ---- worker life ---------------------------------------------------------------------------

// Stops the sampler for good: the reason goes to the log and to storage_wait_status(), and
// the worker exits with code 0, which the postmaster does not restart (a restart would meet
// the same server and fail again, every second, filling the log).
[[noreturn]] void disable_sampler(SharedView &shared, const char *reason) {
    SamplerStatus &status = *shared.status;
    snprintf(status.disabled_reason, sizeof status.disabled_reason, "%s", reason);
    status_store(status.worker_disabled, uint64_t{1});
    pg_call([reason] {
        ereport(LOG, (errmsg("pg_storage_wait: the sampler stops and will not restart: %s", reason),
                      errhint("Restart the server after installing a pg_storage_wait build for "
                              "this PostgreSQL version.")));
        proc_exit(0);
    });
    pg_unreachable();
}

// ShmemInitStruct() raises ERRCODE_INTERNAL_ERROR when the size asked differs from the size
// allocated: that error, and only that one, means "not laid out as this build expects". It
// releases its own ShmemIndexLock before raising, not our AddinShmemInitLock: pg_call flushes
// the error without the abort processing that would release it, so it is released here (held
// on, it would block every later ShmemInitStruct caller that takes it exclusively).
void *find_shmem_struct(const char *name, Size size, bool &found, std::string &mismatch) {
    found = false;
    try {
        return pg_call([name, size, &found] {
            bool was_found = false;
            LWLockAcquire(AddinShmemInitLock, LW_SHARED);
            void *p = ShmemInitStruct(name, size, &was_found);
            LWLockRelease(AddinShmemInitLock);
            found = was_found;
            return p;
        });
    } catch (const PgErrorThrown &e) {
        pg_call([] {
            if (LWLockHeldByMe(AddinShmemInitLock))
                LWLockRelease(AddinShmemInitLock);
        });
        if (e.data->sqlerrcode != ERRCODE_INTERNAL_ERROR)
            throw;
        mismatch = e.data->message ? e.data->message : "size mismatch";
        return nullptr;
    }
}

// The proc array's shared struct, found by name, when its layout is the one compat.hpp mirrors;
// else nullptr, and the tick walks every slot.
const volatile compat::ProcArrayLayout *find_proc_array() {
    const int max_procs = compat::proc_array_max_procs();
    const Size size = pg_call([max_procs] {
        return add_size(offsetof(compat::ProcArrayLayout, pgprocnos),
                        mul_size(sizeof(int), static_cast<Size>(max_procs)));
    });
    bool found = false;
    std::string mismatch;
    const auto *array = static_cast<const volatile compat::ProcArrayLayout *>(
        find_shmem_struct("Proc Array", size, found, mismatch));
    if (settings.test_fail_lookup == kFailProcArray)
        mismatch = "forced by pg_storage_wait.test_fail_lookup";
    if (mismatch.empty() && (!found || array->maxProcs != max_procs))
        mismatch = "maxProcs " + std::to_string(found ? array->maxProcs : -1) + ", expected " +
                   std::to_string(max_procs);
    if (mismatch.empty())
        return array;
    const char *detail = mismatch.c_str();
    pg_call([detail] {
        ereport(LOG, (errmsg("pg_storage_wait: the proc array is not laid out as this build "
                             "expects; the sampler walks every process slot"),
                      errdetail_internal("%s", detail)));
    });
    return nullptr;
}

// The backend status array, found by name: without it no sample can be classified.
void find_backend_status(SharedView &shared) {
    backend_status_count = compat::backend_status_slots();
    const Size size =
        pg_call([] { return mul_size(sizeof(PgBackendStatus), compat::backend_status_slots()); });
    bool found = false;
    std::string mismatch;
    backend_status = static_cast<volatile PgBackendStatus *>(
        find_shmem_struct("Backend Status Array", size, found, mismatch));
    if (settings.test_fail_lookup == kFailBackendStatus)
        mismatch = "forced by pg_storage_wait.test_fail_lookup";
    if (!mismatch.empty())
        disable_sampler(shared, ("the backend status array is not laid out as this build "
                                 "expects (" +
                                 mismatch + ")")
                                    .c_str());
    if (!found)
        disable_sampler(shared, "the backend status array was not found in shared memory");
}

// The tick ring's pages are resident (Ring::create zeroed them in the postmaster) but not
// mapped in this process: the first write to each took a page fault inside a tick, one every
// few ticks over the ring's first lap (36 s at 10 ms). Map them writable once here (Linux
// 5.14+; elsewhere, or on failure, the faults stay where they were). No memory is added.
void map_tick_ring(const SharedView &shared) {
#ifdef MADV_POPULATE_WRITE
    const SharedLayout layout = SharedLayout::compute(shared_capacities());
    const long page = sysconf(_SC_PAGESIZE);
    if (layout.overflow || page <= 0)
        return;
    const auto mask = ~static_cast<uintptr_t>(page - 1);
    const auto base = reinterpret_cast<uintptr_t>(shared.status);
    const uintptr_t start = (base + layout.ticks_offset) & mask;
    const uintptr_t end = (base + layout.rollups_offset + uintptr_t(page) - 1) & mask;
    (void)madvise(reinterpret_cast<void *>(start), end - start, MADV_POPULATE_WRITE);
#else
    (void)shared;
#endif
}

void create_state(SharedView &shared) {
    const size_t max_procs = ProcGlobal->allProcCount;
    std::pmr::memory_resource *tick_memory = make_tick_memory();
    void *place = tick_memory->allocate(sizeof(SamplerState), alignof(SamplerState));
    state = new (place) SamplerState(max_procs, tick_memory, *shared.names);
    state->io_cells.reserve(kIoCells);
    pg_call([] { list_io_cells(state->io, state->io_cells); });
    state->procnos.resize(static_cast<size_t>(compat::proc_array_max_procs()));
    state->setting_flags = read_setting_flags();
    // In the tick memory too: after_tick() reads it at every tick.
    void *policy = tick_memory->allocate(sizeof(RollupPolicy), alignof(RollupPolicy));
    state->policy = new (policy) RollupPolicy(shared.ticks, shared.rollups, shared.partials,
                                              state->rollup, state->tick.max_entries());
    state->tick_context = pg_call([] {
        return AllocSetContextCreate(TopMemoryContext, "pg_storage_wait tick",
                                     ALLOCSET_DEFAULT_SIZES);
    });
}

[[gnu::noinline]] void start_sampler(SharedView &shared) {
    pg_call([] { SetConfigOption("stats_fetch_consistency", "none", PGC_SUSET, PGC_S_OVERRIDE); });
    if (compat::kUntestedMajor)
        pg_call([] {
            ereport(LOG, (errmsg("pg_storage_wait was built for PostgreSQL %s, newer than the "
                                 "newest tested major (%d): pg_stat_io is read through the "
                                 "public call, and each private structure is used only if its "
                                 "check passes",
                                 PG_MAJORVERSION, PGSW_NEWEST_TESTED_MAJOR)));
        });
    find_backend_status(shared);
    proc_array = find_proc_array();
    all_procs = ProcGlobal->allProcs;
    all_proc_count = ProcGlobal->allProcCount;
    first_auxiliary_proc = compat::first_auxiliary_proc();
    own_proc = MyProc;
    create_state(shared);
    map_tick_ring(shared);
    start_devices(shared, state->names);
    start_probe_collector();
    replay_unrolled_ticks(shared);
    start_clock(shared);
    SamplerStatus &status = *shared.status;
    status_store(status.worker_pid, int64_t{MyProcPid});
    status_store(status.worker_started_us, int64_t{GetCurrentTimestamp()});
    status_store(status.worker_starts, status_load(status.worker_starts) + 1);
    status_store(status.sample_interval_ms, int64_t{settings.sample_interval_ms});
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    status_store(status.cpu_cores, uint64_t(cores > 0 ? cores : 1));
}

void stop_sampler(int, Datum arg) {
    auto *status = reinterpret_cast<SamplerStatus *>(DatumGetPointer(arg));
    status_store(status->worker_pid, int64_t{0});
}

// The sleep itself, called through pg_call_function so that it lives with the tick's code.
PGSW_TICK_PATH void sleep_on_latch(void *wait_us_arg) {
    const int64_t wait_us = *static_cast<const int64_t *>(wait_us_arg);
    if (wait_us > 0)
        (void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
                        (wait_us + 999) / 1000, PG_WAIT_EXTENSION);
    ResetLatch(MyLatch);
    CHECK_FOR_INTERRUPTS();
}

// Sleeps until the deadline or a signal; a shutdown or cancel request arrives here.
PGSW_TICK_PATH void wait_until(int64_t deadline_us) {
    int64_t wait_us = deadline_us - monotonic_us();
    pg_call_function(sleep_on_latch, &wait_us);
}

// A reload: new settings apply from the next tick; a new interval restarts the schedule.
[[gnu::cold]] void reload(SharedView &shared, int64_t &period_us, int64_t &deadline_us) {
    ConfigReloadPending = false;
    pg_call([] { ProcessConfigFile(PGC_SIGHUP); });
    state->ticks_until_counters_read = 0;
    state->setting_flags = read_setting_flags();
    devices_reload();
    start_probe_collector();  // the probe turned on: its collector, made here, not in a tick
    if (int64_t{settings.sample_interval_ms} * 1000 == period_us)
        return;
    period_us = int64_t{settings.sample_interval_ms} * 1000;
    deadline_us = monotonic_us() + period_us;
    status_store(shared.status->sample_interval_ms, int64_t{settings.sample_interval_ms});
}

// The worker's C++ body (boundary.hpp: run_worker_body).
PGSW_TICK_PATH void sampler_main() {
    SharedView &shared = require_shared();
    if (status_load(shared.status->worker_disabled))
        pg_call([] { proc_exit(0); });  // disabled earlier in this server's life: stay down
    start_sampler(shared);
    const bool walking_array = proc_array != nullptr;
    // Last before the loop: every wake-up would otherwise pay the kernel's rseq bookkeeping
    // (core/rseq_release.hpp). The outcome goes into the line below; a refusal with its errno.
    const RseqReleaseResult rseq = release_rseq_registration();
    pg_call([&shared, walking_array, &rseq] {
        before_shmem_exit(stop_sampler, PointerGetDatum(shared.status));
        ereport(LOG,
                (errmsg("pg_storage_wait sampler started (interval %d ms, %s, rseq %s%s%s)",
                        settings.sample_interval_ms,
                        walking_array ? "walking the proc array" : "walking every process slot",
                        describe(rseq.outcome), rseq.error ? ": " : "",
                        rseq.error ? strerror(rseq.error) : "")));
    });
    int64_t period_us = int64_t{settings.sample_interval_ms} * 1000;
    int64_t deadline = monotonic_us();
    while (!ShutdownRequestPending) {
        const int64_t now = monotonic_us();
        if (now >= deadline) {
            // Deadlines are absolute: a late tick does not shift the schedule, and the ticks
            // it missed are counted as overruns instead of being run in a burst.
            const uint64_t missed = static_cast<uint64_t>((now - deadline) / period_us);
            run_tick(shared, missed, now);
            deadline += static_cast<int64_t>(missed + 1) * period_us;
        }
        wait_until(deadline);
        if (ConfigReloadPending)
            reload(shared, period_us, deadline);
    }
}

}  // namespace

void pg_storage_wait_worker_main(Datum) {
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
    BackgroundWorkerUnblockSignals();
    BackgroundWorkerInitializeConnection(nullptr, nullptr, 0);
    run_worker_body(sampler_main);
    // Exit 1, not 0: a worker terminated on its own (pg_terminate_backend) is restarted after
    // bgw_restart_time; at server shutdown the postmaster restarts nothing anyway.
    proc_exit(1);
}

}  // namespace pgsw::pg
