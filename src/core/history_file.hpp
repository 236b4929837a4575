#include "core/cpp_only.hpp"
#pragma once
// The history file: both rings and the names their records refer to, written periodically
// while the server runs and at clean shutdown, and read back when shared memory is created
// (server start and crash-restart), so a restart keeps the history up to the last save.
// Format 4 (this machine's byte order and layout):
//
//   "PGSWHIST" | u32 format_version | u32 byte_order (0x01020304 as written) | u32 record_size
//   | u32 entry_size | u32 ring_count (2) | u64 system_identifier | i64 saved_at_us
//   per ring: u64 record_count, then per record: IntervalRecord, then its entries
//   names: u32 name_count, then per name (ids 1, 2, ...): u8 NameKind | u8 length | its bytes
//   u32 CRC-32 of every byte before it
//
// Names: records refer to block devices, replication slots and custom wait events by their
// 16-bit id in the shared NameDictionary (names.hpp), which shared memory loses at a restart.
// The file carries the dictionary as it stood after the rings were read (so every id a saved
// record holds is in it); the loader re-creates the dictionary with only the names the
// restored records use, renumbered 1, 2, ... in their old order, and rewrites the records' ids
// to match, so names that fell out of the history do not pile up across restarts.
//
// Writing streams (save_history): each record is read from the ring (seqlock, as any reader)
// and copied into a buffer of kHistorySaveBufferBytes that is written out whenever it fills, so
// a save's memory does not grow with the rings (at the default sizes the file is ~31 MB; the
// whole-file writer this replaced held ~80 MB). A ring's record_count, known only once its
// records are read, is written as a placeholder and overwritten in place at the end; the CRC is
// computed while streaming, per stretch between placeholders, and the stretches combined
// (crc32_combine) once the counts are known.
//
// The reader validates everything (magic, version, byte order, sizes, server, counts against
// the file length, entry counts, the name table's count, kinds and lengths, every name id a
// record holds against that table, CRC, newest record not after `now`) before it touches a
// ring or the dictionary, then re-appends the records oldest first, so a ring whose capacity
// changed since the file was written keeps the newest records that fit. A missing file is not
// an error; an unreadable, truncated, corrupt, foreign (another server or architecture) or
// future one is reported. Format 3 (the same without the name table) is loaded with every
// name it cannot know shown as "(unknown)", never as another's, and a warning.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/names.hpp"
#include "core/ring.hpp"

namespace pgsw {

// 2: extension 1.1 records (format 2); 3: byte order, system identifier and save time;
// 4: the name table.
constexpr uint32_t kHistoryFormatVersion = 4;
// Still loaded, without names (its records are format 4's).
constexpr uint32_t kHistoryNamelessFormatVersion = 3;
// What a name that a format-3 file cannot tell reads as.
constexpr char kUnknownName[] = "(unknown)";
// The writer's buffer: the bytes of a save held in memory at once (plus one record's copy).
constexpr size_t kHistorySaveBufferBytes = size_t{1} << 20;
// A file whose newest record is later than this past the loader's clock was written before the
// wall clock was set back: loading it would put new ticks before old ones.
constexpr int64_t kHistoryFutureSlackUs = 60 * 1000 * 1000;

struct HistoryLoadResult {
    enum class Status { Loaded, Missing, Invalid } status;
    std::string reason;  // for Invalid: what is wrong, for the WARNING
    uint64_t records_loaded = 0;
    std::string warning;  // for Loaded: what was restored with a loss (format 3: no names)
};

// Identifies the server a file belongs to and when it is read.
struct HistoryOwner {
    uint64_t system_identifier;  // pg_control's: another server's file is refused
    int64_t now_us;              // wall clock (TimestampTz µs) when saving or loading
};

// Where a save's bytes go: the temporary file (save_history), or a test's sink. Each returns
// "" or the error; after an error the writer calls neither again.
class HistorySink {
  public:
    virtual ~HistorySink() = default;
    virtual std::string append(const void *data, size_t n) = 0;  // after what was appended
    // Overwrites bytes appended earlier (a ring's record count).
    virtual std::string overwrite(uint64_t offset, const void *data, size_t n) = 0;
};

// Streams the file's bytes into `sink` through a buffer of `buffer_bytes` (at least 64): the
// rings read as any reader does (seqlock: a record torn by the writer is retried, then left
// out), then the names. Returns "" or the error; `records_saved` gets the count.
std::string write_history(HistorySink &sink, const Ring &ticks, const Ring &rollups,
                          const NameDictionary &names, const HistoryOwner &owner,
                          size_t buffer_bytes = kHistorySaveBufferBytes,
                          uint64_t *records_saved = nullptr);

// write_history() into `path`.tmp, fsynced, renamed over `path`, and the directory fsynced, so
// a crash at any moment leaves the previous file or the new one. Returns "" or the error; on
// error `path` is unchanged and the temporary file removed.
std::string save_history(const std::string &path, const Ring &ticks, const Ring &rollups,
                         const NameDictionary &names, const HistoryOwner &owner,
                         uint64_t *records_saved = nullptr);

// Reads `path` into the (empty) rings and the (empty) dictionary; with a format-3 file,
// `warning` says the names were lost.
HistoryLoadResult load_history(const std::string &path, Ring &ticks, Ring &rollups,
                               NameDictionary &names, const HistoryOwner &owner);

uint32_t crc32(const void *data, size_t length, uint32_t crc = 0) noexcept;
// The CRC-32 of A followed by B, from crc32(A), crc32(B) and B's length (zlib's method).
uint32_t crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) noexcept;

}  // namespace pgsw
