#include "core/cpp_only.hpp"
#pragma once
// A ring of IntervalRecords with an arena of ArenaEntries, in memory shared between one writer
// (the sampler worker) and any number of readers (SQL functions in any backend).
//
// Concurrency protocol (readers never block the writer, and never see a half-written record):
//  * One writer. It appends record N by
//      1. reserving the arena run [pos, pos+n): arena_reserved = pos+n, store-release, then a
//         full fence, *before* overwriting any entry (so a reader can tell its copy is stale);
//      2. writing the entries;
//      3. seqlock on the slot: seq += 1 (odd), fence, write the record, fence, seq += 1 (even);
//      4. records_written = N+1, store-release (the record becomes visible).
//  * A reader of record N: seq1 = load-acquire(slot.seq), odd -> retry; copy the record;
//    acquire fence; seq2 = load(slot.seq); seq1 != seq2 or record_no != N -> torn, retry (a few
//    times, then skip). Then copy its entries, acquire fence, and check that
//    arena_reserved - entry_start <= arena_capacity: otherwise the writer has reused part of the
//    run meanwhile and the record is reported gone.
//  * floor_record_no hides records below it (storage_wait_reset() sets it: a reset without
//    writing to the ring, so the single-writer rule holds).
// Fields shared across processes are plain integers accessed with GCC's __atomic builtins, which
// have the same memory-model meaning as PostgreSQL's pg_atomic_* on every supported platform.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/records.hpp"

namespace pgsw {

// A size computed with overflow checks, like PostgreSQL's add_size()/mul_size() but without
// raising: `overflow` sticks once any step overflowed.
struct CheckedSize {
    size_t value = 0;
    bool overflow = false;
    CheckedSize() = default;
    explicit CheckedSize(size_t v) : value(v) {}
    CheckedSize &operator+=(const CheckedSize &o) noexcept {
        overflow |= o.overflow || __builtin_add_overflow(value, o.value, &value);
        return *this;
    }
    CheckedSize &operator+=(size_t n) noexcept { return *this += CheckedSize(n); }
    static CheckedSize product(uint64_t a, uint64_t b) noexcept {
        CheckedSize r;
        uint64_t p = 0;
        r.overflow = __builtin_mul_overflow(a, b, &p) || p > SIZE_MAX;
        r.value = r.overflow ? SIZE_MAX : static_cast<size_t>(p);
        return r;
    }
};

struct RingHeader {
    uint64_t record_capacity;
    uint64_t arena_capacity;   // entries
    uint64_t records_written;  // next record_no
    uint64_t arena_reserved;   // arena positions handed out
    uint64_t floor_record_no;  // records below are hidden by a reset
};

// EntriesGone: the record is intact but the arena has reused its entries (a record's totals
// stay usable; its breakdown is lost). The copy then has no entries and n_* of zero.
enum class ReadStatus { Ok, EntriesGone, Gone, Torn, NotWritten };

struct RecordCopy {
    IntervalRecord record;
    std::vector<ArenaEntry> entries;
};

class Ring {
  public:
    Ring() = default;
    // Bytes for a ring with these capacities (header, slots and arena, each 64-byte aligned).
    static size_t bytes_needed(uint64_t record_capacity, uint64_t arena_capacity) noexcept;
    // The same with overflow detection (a size that does not fit in size_t).
    static CheckedSize bytes_needed_checked(uint64_t record_capacity,
                                            uint64_t arena_capacity) noexcept;
    // Lay out an empty ring in `memory` (zeroed by the caller or not) and return a view of it.
    static Ring create(void *memory, uint64_t record_capacity, uint64_t arena_capacity) noexcept;
    // A view of a ring laid out earlier, possibly by another process.
    static Ring attach(void *memory) noexcept;

    bool valid() const noexcept { return header_ != nullptr; }
    uint64_t record_capacity() const noexcept { return header_->record_capacity; }
    uint64_t arena_capacity() const noexcept { return header_->arena_capacity; }

    // Writer only. Copies `record` (seq, record_no and entry_start are set here) and its
    // entries; at most arena_capacity/2 entries are kept (the rest is cut and the record
    // flagged kFlagEntriesTruncated) so one record can never evict its own predecessor
    // completely. Returns the record_no written.
    PGSW_TICK_PATH uint64_t append(const IntervalRecord &record, const ArenaEntry *entries,
                                   size_t n) noexcept;
    // Writer only. Ask the CPU for the lines the next append() writes (its slot, the start of
    // its arena run): called at the start of a tick, their misses overlap the tick's own work
    // instead of stalling append() one line after another. A hint: no effect on the contents.
    PGSW_TICK_PATH void prefetch_next_append() const noexcept;

    // Reader. Oldest and newest readable record_no: [first_readable, end). end() is also
    // read by the writer at every tick (sampler_policy.cpp), hence inline: out of line it sat
    // on a page of its own that each tick touched for one load.
    uint64_t end() const noexcept {
        return __atomic_load_n(&header_->records_written, __ATOMIC_ACQUIRE);
    }
    uint64_t first_readable() const noexcept;
    // Copies the record and the runs of its entries whose kinds are in `kinds` (a mask of
    // EntryKindMask); the n_* counts of the kinds left out are set to 0. May throw bad_alloc.
    ReadStatus read(uint64_t record_no, RecordCopy &out, uint32_t kinds = kAllEntries) const;
    ReadStatus read_record(uint64_t record_no, IntervalRecord &out) const noexcept;  // no entries

    // The first record_no in [first_readable, end) after which every readable record has
    // end_us > since_us (records are appended in time order): end() when none has.
    uint64_t first_after(int64_t since_us) const noexcept;
    // Records with end_us > since_us, oldest first, readable ones only.
    std::vector<RecordCopy> read_since(int64_t since_us, bool with_entries) const;

    // Hide everything written so far from readers (storage_wait_reset()).
    void hide_all() noexcept;

  private:
    Ring(RingHeader *header, IntervalRecord *slots, ArenaEntry *arena) noexcept
        : header_(header), slots_(slots), arena_(arena) {}

    RingHeader *header_ = nullptr;
    IntervalRecord *slots_ = nullptr;
    ArenaEntry *arena_ = nullptr;
};

}  // namespace pgsw
