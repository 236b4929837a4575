#include "core/ring.hpp"

#include <algorithm>
#include <cstring>

namespace pgsw {
namespace {

constexpr size_t kAlign = 64;
constexpr int kTornRetries = 4;
constexpr size_t kPrefetchArenaBytes = 256;

size_t align_up(size_t n) noexcept {
    return (n + kAlign - 1) & ~(kAlign - 1);
}

uint64_t load_acquire(const uint64_t &v) noexcept {
    return __atomic_load_n(&v, __ATOMIC_ACQUIRE);
}
uint64_t load_relaxed(const uint64_t &v) noexcept {
    return __atomic_load_n(&v, __ATOMIC_RELAXED);
}
void store_release(uint64_t &v, uint64_t x) noexcept {
    __atomic_store_n(&v, x, __ATOMIC_RELEASE);
}
void store_relaxed(uint64_t &v, uint64_t x) noexcept {
    __atomic_store_n(&v, x, __ATOMIC_RELAXED);
}

size_t slots_offset() noexcept {
    return align_up(sizeof(RingHeader));
}
size_t arena_offset(uint64_t record_capacity) noexcept {
    return slots_offset() + align_up(record_capacity * sizeof(IntervalRecord));
}

// A tick's entries into the arena (a few 32-byte entries). On x86-64 one string move (GCC
// emits `rep movsq` for the fixed-size slot copy below), not a call to libc's memcpy: its code
// is one more page that every tick touches cold after its sleep. Sanitized builds keep memcpy,
// which AddressSanitizer checks (it cannot see into inline asm); x32 is left out, as its
// 32-bit pointers would leave the registers' upper halves undefined.
#if defined(__SANITIZE_ADDRESS__)
#define PGSW_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PGSW_ASAN 1
#endif
#endif
void copy_entries(ArenaEntry *to, const ArenaEntry *from, size_t n) noexcept {
#if defined(__x86_64__) && defined(__LP64__) && !defined(PGSW_ASAN)
    size_t bytes = n * sizeof(ArenaEntry);
    asm volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(bytes) : : "memory");
#else
    std::memcpy(to, from, n * sizeof(ArenaEntry));
#endif
}

}  // namespace

size_t Ring::bytes_needed(uint64_t record_capacity, uint64_t arena_capacity) noexcept {
    return arena_offset(record_capacity) + align_up(arena_capacity * sizeof(ArenaEntry));
}

CheckedSize Ring::bytes_needed_checked(uint64_t record_capacity, uint64_t arena_capacity) noexcept {
    CheckedSize total(align_up(sizeof(RingHeader)));
    CheckedSize part = CheckedSize::product(record_capacity, sizeof(IntervalRecord));
    part += kAlign;  // room to align up
    total += part;
    part = CheckedSize::product(arena_capacity, sizeof(ArenaEntry));
    part += kAlign;
    total += part;
    if (!total.overflow)  // the exact figure, now that it is known to fit
        total.value = bytes_needed(record_capacity, arena_capacity);
    return total;
}

Ring Ring::create(void *memory, uint64_t record_capacity, uint64_t arena_capacity) noexcept {
    std::memset(memory, 0, bytes_needed(record_capacity, arena_capacity));
    auto *header = static_cast<RingHeader *>(memory);
    header->record_capacity = record_capacity;
    header->arena_capacity = arena_capacity;
    return attach(memory);
}

Ring Ring::attach(void *memory) noexcept {
    auto *base = static_cast<char *>(memory);
    auto *header = static_cast<RingHeader *>(memory);
    return Ring(header, reinterpret_cast<IntervalRecord *>(base + slots_offset()),
                reinterpret_cast<ArenaEntry *>(base + arena_offset(header->record_capacity)));
}

uint64_t Ring::append(const IntervalRecord &record, const ArenaEntry *entries, size_t n) noexcept {
    const uint64_t arena_cap = header_->arena_capacity;
    const bool cut = n > arena_cap / 2;
    if (cut)
        n = arena_cap / 2;
    // 1. Reserve the arena run before touching it.
    const uint64_t start = load_relaxed(header_->arena_reserved);
    store_release(header_->arena_reserved, start + n);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    // 2. Entries, in at most two copies: the run may wrap around the end of the arena.
    if (n > 0) {
        const uint64_t first = start % arena_cap;
        const size_t before_end = static_cast<size_t>(std::min<uint64_t>(n, arena_cap - first));
        copy_entries(&arena_[first], entries, before_end);
        if (before_end < n)
            copy_entries(&arena_[0], entries + before_end, n - before_end);
    }
    // 3. The slot, under its seqlock. The record goes straight into it and the ring's fields
    // are set there: a copy on the stack first was one more ~500-byte cold run per tick.
    const uint64_t record_no = load_relaxed(header_->records_written);
    IntervalRecord &slot = slots_[record_no % header_->record_capacity];
    const uint64_t seq = load_relaxed(slot.seq);
    store_relaxed(slot.seq, seq + 1);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    std::memcpy(reinterpret_cast<char *>(&slot) + sizeof(uint64_t),
                reinterpret_cast<const char *>(&record) + sizeof(uint64_t),
                sizeof(IntervalRecord) - sizeof(uint64_t));
    slot.record_no = record_no;
    slot.entry_start = start;
    if (cut)
        slot.flags |= kFlagEntriesTruncated;
    // Keep the n_* counts consistent with a cut run: drop the kinds at the tail first.
    size_t remaining = n;
    for (uint32_t *count : entry_runs(slot)) {
        *count = static_cast<uint32_t>(std::min<size_t>(*count, remaining));
        remaining -= *count;
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
    store_relaxed(slot.seq, seq + 2);
    // 4. Publish.
    store_release(header_->records_written, record_no + 1);
    return record_no;
}

void Ring::prefetch_next_append() const noexcept {
    const uint64_t record_no = load_relaxed(header_->records_written);
    const char *slot =
        reinterpret_cast<const char *>(&slots_[record_no % header_->record_capacity]);
    for (size_t offset = 0; offset < sizeof(IntervalRecord); offset += kAlign)
        __builtin_prefetch(slot + offset, 1);
    __builtin_prefetch(slot + sizeof(IntervalRecord) - 1, 1);  // a slot need not start a line
    // A tick's run is a few wait groups and queries (32 bytes each): its first lines.
    const uint64_t first = load_relaxed(header_->arena_reserved) % header_->arena_capacity;
    const char *run = reinterpret_cast<const char *>(&arena_[first]);
    for (size_t offset = 0; offset < kPrefetchArenaBytes; offset += kAlign)
        __builtin_prefetch(run + offset, 1);
}

uint64_t Ring::first_readable() const noexcept {
    const uint64_t written = end();
    const uint64_t cap = header_->record_capacity;
    // The oldest slot may be under rewrite by the next append: leave it out.
    const uint64_t oldest = written > cap - 1 ? written - (cap - 1) : 0;
    return std::max(oldest, load_acquire(header_->floor_record_no));
}

ReadStatus Ring::read_record(uint64_t record_no, IntervalRecord &out) const noexcept {
    if (record_no >= end())
        return ReadStatus::NotWritten;
    if (record_no < first_readable())
        return ReadStatus::Gone;
    const IntervalRecord &slot = slots_[record_no % header_->record_capacity];
    for (int attempt = 0; attempt < kTornRetries; ++attempt) {
        const uint64_t seq1 = load_acquire(slot.seq);
        if (seq1 & 1)
            continue;
        std::memcpy(&out, &slot, sizeof out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        const uint64_t seq2 = load_relaxed(slot.seq);
        if (seq1 != seq2)
            continue;
        return out.record_no == record_no ? ReadStatus::Ok : ReadStatus::Gone;
    }
    return ReadStatus::Torn;
}

ReadStatus Ring::read(uint64_t record_no, RecordCopy &out, uint32_t kinds) const {
    const ReadStatus status = read_record(record_no, out.record);
    if (status != ReadStatus::Ok)
        return status;
    IntervalRecord &r = out.record;
    // The runs, in arena order (records.hpp), and whether each is wanted.
    const EntryRuns counts = entry_runs(r);
    uint64_t wanted = 0;
    for (size_t k = 0; k < kEntryRunCount; ++k)
        wanted += (kinds & kEntryRunMasks[k]) ? *counts[k] : 0;
    out.entries.resize(wanted);
    const uint64_t arena_cap = header_->arena_capacity;
    uint64_t source = r.entry_start, copied = 0;
    for (size_t k = 0; k < kEntryRunCount; ++k) {
        const uint64_t n = *counts[k];
        if (!(kinds & kEntryRunMasks[k])) {
            *counts[k] = 0;
        } else if (n > 0) {  // (an empty run: no memcpy to an empty vector's null data())
            // A run wraps at most once (n <= arena_cap / 2): two copies, no division per entry.
            const uint64_t first = source % arena_cap;
            const uint64_t head = std::min(n, arena_cap - first);
            std::memcpy(out.entries.data() + copied, &arena_[first], head * sizeof(ArenaEntry));
            std::memcpy(out.entries.data() + copied + head, &arena_[0],
                        (n - head) * sizeof(ArenaEntry));
            copied += n;
        }
        source += n;
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (load_acquire(header_->arena_reserved) - r.entry_start <= arena_cap)
        return ReadStatus::Ok;
    out.entries.clear();
    for (uint32_t *count : counts)
        *count = 0;
    return ReadStatus::EntriesGone;
}

uint64_t Ring::first_after(int64_t since_us) const noexcept {
    const uint64_t first = first_readable();
    IntervalRecord r;
    // Everything is newer (a whole-ring read): no need to walk back through every record.
    if (read_record(first, r) == ReadStatus::Ok && r.end_us > since_us)
        return first;
    for (uint64_t no = end(); no-- > first;)
        if (read_record(no, r) == ReadStatus::Ok && r.end_us <= since_us)
            return no + 1;
    return first;
}

std::vector<RecordCopy> Ring::read_since(int64_t since_us, bool with_entries) const {
    std::vector<RecordCopy> result;
    const uint64_t last = end();
    uint64_t no = first_after(since_us);
    result.reserve(last > no ? last - no : 0);
    for (; no < last; ++no) {
        RecordCopy &copy = result.emplace_back();
        const ReadStatus status = with_entries ? read(no, copy) : read_record(no, copy.record);
        if (status != ReadStatus::Ok && status != ReadStatus::EntriesGone)
            result.pop_back();
    }
    return result;
}

void Ring::hide_all() noexcept {
    store_release(header_->floor_record_no, end());
}

}  // namespace pgsw
