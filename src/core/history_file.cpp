#include "core/history_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <map>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pgsw {
namespace {

constexpr char kMagic[8] = {'P', 'G', 'S', 'W', 'H', 'I', 'S', 'T'};
constexpr uint32_t kRingCount = 2;
constexpr uint32_t kByteOrderMark = 0x01020304;
// magic, version, byte order, record size, entry size, ring count, system id, saved at
constexpr size_t kHeaderBytes = sizeof kMagic + 5 * sizeof(uint32_t) + 2 * sizeof(uint64_t);

const uint32_t *crc_table() noexcept {
    static uint32_t table[256];
    static bool built = false;
    if (!built) {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k)
                c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        built = true;
    }
    return table;
}

// ---- writing -----------------------------------------------------------------------------

// The file's bytes through a fixed buffer into a sink, with the CRC computed as they pass.
// A placeholder (a ring's record count, known only after its records) splits the CRC into
// stretches that finish() combines once every placeholder's value is set.
class StreamWriter {
  public:
    StreamWriter(HistorySink &sink, size_t buffer_bytes)
        : sink_(sink), buffer_(std::max<size_t>(buffer_bytes, 64)) {}

    void put(const void *data, size_t n) {
        crc_ = crc32(data, n, crc_);
        stretch_bytes_ += n;
        copy(data, n);
    }
    template <typename T>
    void put_value(const T &v) {
        put(&v, sizeof v);
    }
    // A u64 written as 0 now, set by fill() before finish(); returns its handle.
    size_t placeholder() {
        end_stretch();
        stretches_.push_back({0, sizeof(uint64_t), true, written_ + used_, 0});
        const uint64_t zero = 0;
        copy(&zero, sizeof zero);
        return stretches_.size() - 1;
    }
    void fill(size_t handle, uint64_t value) { stretches_[handle].value = value; }

    // Writes what is buffered, the placeholders' values and the CRC; "" or the first error.
    std::string finish() {
        end_stretch();
        flush();
        uint32_t crc = 0;
        for (const Stretch &s : stretches_) {
            uint32_t part = s.crc;
            if (s.placeholder) {
                part = crc32(&s.value, sizeof s.value);
                if (error_.empty())
                    error_ = sink_.overwrite(s.offset, &s.value, sizeof s.value);
            }
            crc = crc32_combine(crc, part, s.length);
        }
        if (error_.empty())
            error_ = sink_.append(&crc, sizeof crc);
        return error_;
    }
    const std::string &error() const { return error_; }

  private:
    struct Stretch {
        uint32_t crc;
        uint64_t length;
        bool placeholder;
        uint64_t offset;  // placeholder: where it is in the file
        uint64_t value;
    };

    void copy(const void *data, size_t n) {
        const auto *p = static_cast<const char *>(data);
        while (n > 0 && error_.empty()) {
            const size_t take = std::min(buffer_.size() - used_, n);
            std::memcpy(buffer_.data() + used_, p, take);
            used_ += take, p += take, n -= take;
            if (used_ == buffer_.size())
                flush();
        }
    }
    void flush() {
        if (used_ > 0 && error_.empty())
            error_ = sink_.append(buffer_.data(), used_);
        written_ += used_;
        used_ = 0;
    }
    void end_stretch() {
        if (stretch_bytes_ > 0)
            stretches_.push_back({crc_, stretch_bytes_, false, 0, 0});
        crc_ = 0, stretch_bytes_ = 0;
    }

    HistorySink &sink_;
    std::vector<char> buffer_;
    size_t used_ = 0;
    uint64_t written_ = 0;  // bytes handed to the sink
    uint32_t crc_ = 0;      // of the current stretch
    uint64_t stretch_bytes_ = 0;
    std::vector<Stretch> stretches_;  // a handful: two placeholders, three stretches
    std::string error_;
};

// The records readable now, in order (a record overwritten while being copied is left out),
// one at a time through `copy` (reused: its entries keep the largest record's capacity).
uint64_t put_ring(StreamWriter &out, const Ring &ring, RecordCopy &copy) {
    const size_t count = out.placeholder();
    uint64_t saved = 0;
    for (uint64_t no = ring.first_readable(); no < ring.end() && out.error().empty(); ++no)
        if (ring.read(no, copy) == ReadStatus::Ok) {
            out.put_value(copy.record);
            out.put(copy.entries.data(), copy.entries.size() * sizeof(ArenaEntry));
            ++saved;
        }
    out.fill(count, saved);
    return saved;
}

// Read after the rings: every id a saved record holds was published before that record.
void put_names(StreamWriter &out, const NameDictionary &names) {
    const uint32_t count = name_count(names);
    out.put_value<uint32_t>(count > 1 ? count - 1 : 0);
    for (uint32_t id = 1; id < count; ++id) {
        const NameSlot &slot = names.slots[id];
        const auto length = static_cast<uint8_t>(std::min<size_t>(slot.length, kNameMaxLength));
        out.put_value(slot.kind);
        out.put_value(length);
        out.put(slot.text, length);
    }
}

class FileSink final : public HistorySink {
  public:
    FileSink(int fd, const std::string &path) : fd_(fd), path_(path) {}
    std::string append(const void *data, size_t n) override { return write_at(-1, data, n); }
    std::string overwrite(uint64_t offset, const void *data, size_t n) override {
        return write_at(static_cast<off_t>(offset), data, n);
    }

  private:
    // offset < 0: at the end (write), else pwrite.
    std::string write_at(off_t offset, const void *data, size_t n) {
        const auto *p = static_cast<const char *>(data);
        while (n > 0) {
            const ssize_t done = offset < 0 ? write(fd_, p, n) : pwrite(fd_, p, n, offset);
            if (done < 0 && errno == EINTR)
                continue;
            if (done <= 0)
                return "could not write \"" + path_ +
                       "\": " + (done < 0 ? std::strerror(errno) : "no progress");
            p += done, n -= static_cast<size_t>(done);
            offset = offset < 0 ? offset : offset + done;
        }
        return "";
    }
    int fd_;
    const std::string &path_;
};

std::string directory_of(const std::string &path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

// The rename is durable only once the directory entry is on disk.
bool fsync_directory(const std::string &dir) {
    const int fd = open(dir.c_str(), O_RDONLY);
    if (fd < 0)
        return false;
    const bool ok = fsync(fd) == 0;
    close(fd);
    return ok;
}

// ---- reading -----------------------------------------------------------------------------

// The whole file, or why it cannot be read (a missing file is not an error: `missing`).
bool read_file(const std::string &path, std::vector<char> &bytes, bool &missing, std::string &why) {
    missing = false;
    const int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) {
        missing = errno == ENOENT;
        why = std::string("could not open the file: ") + std::strerror(errno);
        return false;
    }
    struct stat st {};
    bool ok = fstat(fd, &st) == 0;
    if (ok) {
        bytes.resize(static_cast<size_t>(st.st_size));
        size_t done = 0;
        while (ok && done < bytes.size()) {
            const ssize_t n = read(fd, bytes.data() + done, bytes.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            ok = n > 0;
            done += n > 0 ? static_cast<size_t>(n) : 0;
        }
    }
    if (!ok)
        why = std::string("could not read the file: ") +
              (errno ? std::strerror(errno) : "unexpected end of file");
    close(fd);
    return ok;
}

class Reader {
  public:
    Reader(const char *data, size_t n) : data_(data), left_(n) {}
    template <typename T>
    bool get(T &v) {
        return get_bytes(&v, sizeof v);
    }
    bool get_bytes(void *out, size_t n) {
        if (n > left_)
            return false;
        if (n == 0)  // a record without entries: `out` is an empty vector's nullptr data()
            return true;
        std::memcpy(out, data_, n);
        return skip(n);
    }
    bool skip(size_t n) {
        if (n > left_)
            return false;
        data_ += n;
        left_ -= n;
        return true;
    }
    const char *here() const { return data_; }
    size_t left() const { return left_; }

  private:
    const char *data_;
    size_t left_;
};

// A record in the file's bytes: read in place, copied only when restored.
struct SavedRecord {
    const char *at;  // its IntervalRecord, then `entries` ArenaEntries (unaligned: memcpy)
    uint64_t entries;
};

struct SavedRing {
    std::vector<SavedRecord> records;
    size_t keep = 0;  // the newest that fit in the ring it is restored to
    size_t first_kept() const { return records.size() - keep; }
};

IntervalRecord record_at(const SavedRecord &saved) {
    IntervalRecord r;
    std::memcpy(&r, saved.at, sizeof r);
    return r;
}
ArenaEntry entry_at(const SavedRecord &saved, uint64_t i) {
    ArenaEntry e;
    std::memcpy(&e, saved.at + sizeof(IntervalRecord) + i * sizeof(ArenaEntry), sizeof e);
    return e;
}

// Parse one ring's records; fails without side effects.
bool parse_ring(Reader &in, SavedRing &out, int64_t &newest_end_us, std::string &why) {
    uint64_t count = 0;
    if (!in.get(count))
        return why = "truncated ring header", false;
    if (count > in.left() / sizeof(IntervalRecord))
        return why = "record count exceeds file", false;
    out.records.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
        const char *at = in.here();
        IntervalRecord r;
        if (!in.get(r))
            return why = "truncated record", false;
        const uint64_t n = entry_count(r);
        if (n > in.left() / sizeof(ArenaEntry))
            return why = "entry count exceeds file", false;
        in.skip(n * sizeof(ArenaEntry));
        newest_end_us = std::max(newest_end_us, r.end_us);
        out.records.push_back({at, n});
    }
    return true;
}

// The name table (format 4): names[id - 1] is id's. Kinds and lengths are checked here, the
// ids records hold against it by NameRemap.
bool parse_names(Reader &in, std::vector<NameSlot> &names, std::string &why) {
    uint32_t count = 0;
    if (!in.get(count))
        return why = "truncated name table", false;
    if (count > kNameCapacity - 1)
        return why = "name table of " + std::to_string(count) + " names, more than " +
                     std::to_string(kNameCapacity - 1),
               false;
    names.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
        NameSlot &slot = names[i];
        std::memset(&slot, 0, sizeof slot);
        if (!in.get(slot.kind) || !in.get(slot.length))
            return why = "truncated name table", false;
        if (slot.kind < static_cast<uint8_t>(NameKind::Device) ||
            slot.kind > static_cast<uint8_t>(NameKind::Tablespace))
            return why = "name " + std::to_string(i + 1) + " of unknown kind " +
                         std::to_string(slot.kind),
                   false;
        if (slot.length > kNameMaxLength)
            return why = "name " + std::to_string(i + 1) + " of " + std::to_string(slot.length) +
                         " bytes, more than " + std::to_string(kNameMaxLength),
                   false;
        if (!in.get_bytes(slot.text, slot.length))
            return why = "truncated name table", false;
    }
    return true;
}

// Calls fn(kind, id) for each name id an entry holds (0 included: "no name"); fn may change it.
template <typename Fn>
void for_each_name_id(ArenaEntry &e, Fn &&fn) {
    switch (e.kind) {
        case EntryKind::WaitGroup:
            if (is_custom_wait_event(e.wait.wait_event_info)) {
                uint16_t id = custom_wait_event_name(e.wait.wait_event_info);
                fn(NameKind::WaitEvent, id);
                e.wait.wait_event_info = (e.wait.wait_event_info & 0xFFFF0000u) | id;
            }
            break;
        case EntryKind::LatencyBin:
            fn(NameKind::Device, e.bin.device);
            break;
        case EntryKind::DeviceIo:
            fn(NameKind::Device, e.device_io.device);
            break;
        case EntryKind::DeviceTime:
            fn(NameKind::Device, e.device_time.device);
            break;
        case EntryKind::Slot:
            fn(NameKind::Slot, e.slot.slot);
            break;
        default:
            break;
    }
}

// The restored dictionary: the names the restored records use, renumbered from 1 in the order
// of their old ids, and each record's old id -> new id. From a format-3 file (`table` null),
// each (kind, old id) gets a name of its own reading kUnknownName: distinct ids stay distinct
// (two devices are never summed as one), and none is ever shown under another's name.
class NameRemap {
  public:
    explicit NameRemap(const std::vector<NameSlot> *table) : table_(table) {}

    // Checks every record's ids against the table; notes those of the kept records.
    bool scan(const SavedRing &ring, std::string &why) {
        for (size_t r = 0; r < ring.records.size(); ++r)
            for (uint64_t i = 0; i < ring.records[r].entries; ++i) {
                ArenaEntry e = entry_at(ring.records[r], i);
                bool ok = true;
                for_each_name_id(e, [&](NameKind kind, uint16_t id) {
                    if (id == 0 || !ok)
                        return;
                    if (table_ != nullptr &&
                        (id > table_->size() || (*table_)[id - 1].kind != uint8_t(kind))) {
                        const bool lacks = id > table_->size();
                        why = "a record refers to name " + std::to_string(id) +
                              (lacks ? ", which the file's name table lacks"
                                     : ", which the file's name table has of another kind");
                        ok = false;
                    } else if (r >= ring.first_kept()) {
                        ids_.emplace(key(kind, id), 0);
                    }
                });
                if (!ok)
                    return false;
            }
        return true;
    }

    // Writes the dictionary (new ids in old-id order; beyond its capacity: 0, "no name").
    void restore(NameDictionary &names) {
        std::memset(&names, 0, sizeof names);
        uint32_t next = 1;
        for (auto &[k, new_id] : ids_) {
            if (next >= kNameCapacity)
                break;
            new_id = static_cast<uint16_t>(next);
            NameSlot &slot = names.slots[next++];
            const uint16_t old_id = static_cast<uint16_t>(k >> 8);
            if (table_ != nullptr) {
                slot = (*table_)[old_id - 1];
            } else {
                slot.kind = static_cast<uint8_t>(k & 0xFF);
                slot.length = sizeof kUnknownName - 1;
                std::memcpy(slot.text, kUnknownName, slot.length);
            }
        }
        __atomic_store_n(&names.count, next, __ATOMIC_RELEASE);
    }

    void rewrite(ArenaEntry &e) const {
        for_each_name_id(e, [this](NameKind kind, uint16_t &id) {
            if (id != 0)
                id = ids_.at(key(kind, id));
        });
    }

  private:
    // Old id first: std::map then orders by it.
    static uint32_t key(NameKind kind, uint16_t id) { return uint32_t{id} << 8 | uint8_t(kind); }
    const std::vector<NameSlot> *table_;
    std::map<uint32_t, uint16_t> ids_;
};

void restore_ring(Ring &ring, const SavedRing &saved, const NameRemap &remap) {
    RecordCopy copy;
    for (size_t r = saved.first_kept(); r < saved.records.size(); ++r) {
        const SavedRecord &s = saved.records[r];
        copy.record = record_at(s);
        copy.entries.resize(s.entries);
        for (uint64_t i = 0; i < s.entries; ++i) {
            copy.entries[i] = entry_at(s, i);
            remap.rewrite(copy.entries[i]);
        }
        ring.append(copy.record, copy.entries.data(), copy.entries.size());
    }
}

// Format 1 (extension 1.0) records lack the fields format 2 adds (timeline, breakdown,
// database, checkpointer, autovacuum); made up, they would mislead, so the file is rejected.
std::string format_mismatch(uint32_t version) {
    std::string why = "history file format " + std::to_string(version) +
                      ", but this build reads format " + std::to_string(kHistoryFormatVersion);
    if (version == 1)
        why += " (format 1 was written by pg_storage_wait 1.0; its records are not converted)";
    if (version == 2)
        why +=
            " (format 2 does not say which server wrote it, so it cannot be trusted as this "
            "server's)";
    return why;
}

std::string nameless_warning() {
    const std::string v3 = std::to_string(kHistoryNamelessFormatVersion);
    return "format " + v3 + ", but this build writes format " +
           std::to_string(kHistoryFormatVersion) +
           ": the names of block devices, replication slots and custom wait events are not in "
           "format " +
           v3 + " and read \"" + kUnknownName + "\" in the restored records";
}

}  // namespace

uint32_t crc32(const void *data, size_t length, uint32_t crc) noexcept {
    const uint32_t *table = crc_table();
    const auto *p = static_cast<const unsigned char *>(data);
    crc = ~crc;
    for (size_t i = 0; i < length; ++i)
        crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

// zlib's crc32_combine: crc_a advanced over length_b zero bytes (a linear map in GF(2), applied
// by repeated squaring of the one-zero-bit operator), then xor crc_b.
namespace {
uint32_t gf2_times(const uint32_t *matrix, uint32_t vector) noexcept {
    uint32_t sum = 0;
    for (; vector != 0; vector >>= 1, ++matrix)
        if (vector & 1)
            sum ^= *matrix;
    return sum;
}
void gf2_square(uint32_t *square, const uint32_t *matrix) noexcept {
    for (int n = 0; n < 32; ++n)
        square[n] = gf2_times(matrix, matrix[n]);
}
}  // namespace

uint32_t crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) noexcept {
    if (length_b == 0)
        return crc_a;
    uint32_t even[32], odd[32];
    odd[0] = 0xEDB88320u;  // the operator for one zero bit
    for (int n = 1; n < 32; ++n)
        odd[n] = 1u << (n - 1);
    gf2_square(even, odd);  // two zero bits
    gf2_square(odd, even);  // four
    do {
        gf2_square(even, odd);  // one zero byte, then 4, 16, ...
        if (length_b & 1)
            crc_a = gf2_times(even, crc_a);
        length_b >>= 1;
        if (length_b == 0)
            break;
        gf2_square(odd, even);  // 2, 8, 32, ... zero bytes
        if (length_b & 1)
            crc_a = gf2_times(odd, crc_a);
        length_b >>= 1;
    } while (length_b != 0);
    return crc_a ^ crc_b;
}

std::string write_history(HistorySink &sink, const Ring &ticks, const Ring &rollups,
                          const NameDictionary &names, const HistoryOwner &owner,
                          size_t buffer_bytes, uint64_t *records_saved) {
    StreamWriter out(sink, buffer_bytes);
    out.put(kMagic, sizeof kMagic);
    out.put_value<uint32_t>(kHistoryFormatVersion);
    out.put_value<uint32_t>(kByteOrderMark);
    out.put_value<uint32_t>(sizeof(IntervalRecord));
    out.put_value<uint32_t>(sizeof(ArenaEntry));
    out.put_value<uint32_t>(kRingCount);
    out.put_value<uint64_t>(owner.system_identifier);
    out.put_value<int64_t>(owner.now_us);
    RecordCopy copy;
    const uint64_t saved = put_ring(out, ticks, copy) + put_ring(out, rollups, copy);
    put_names(out, names);
    const std::string error = out.finish();
    if (error.empty() && records_saved != nullptr)
        *records_saved = saved;
    return error;
}

std::string save_history(const std::string &path, const Ring &ticks, const Ring &rollups,
                         const NameDictionary &names, const HistoryOwner &owner,
                         uint64_t *records_saved) {
    const std::string tmp = path + ".tmp";
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0)
        return "could not create \"" + tmp + "\": " + std::strerror(errno);
    std::string error;
    try {
        FileSink sink(fd, tmp);
        error = write_history(sink, ticks, rollups, names, owner, kHistorySaveBufferBytes,
                              records_saved);
    } catch (...) {  // out of memory: no file half written is left behind
        close(fd);
        unlink(tmp.c_str());
        throw;
    }
    if (error.empty() && fsync(fd) != 0)
        error = "could not fsync \"" + tmp + "\": " + std::strerror(errno);
    if (close(fd) != 0 && error.empty())
        error = "could not close \"" + tmp + "\": " + std::strerror(errno);
    if (!error.empty()) {
        unlink(tmp.c_str());
        return error;
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int rename_errno = errno;
        unlink(tmp.c_str());
        return "could not rename \"" + tmp + "\": " + std::strerror(rename_errno);
    }
    if (!fsync_directory(directory_of(path)))
        return "could not fsync the directory of \"" + path + "\": " + std::strerror(errno);
    return "";
}

HistoryLoadResult load_history(const std::string &path, Ring &ticks, Ring &rollups,
                               NameDictionary &names, const HistoryOwner &owner) {
    using Status = HistoryLoadResult::Status;
    auto invalid = [](std::string why) { return HistoryLoadResult{Status::Invalid, why, 0, ""}; };
    std::vector<char> bytes;
    bool missing = false;
    std::string why;
    if (!read_file(path, bytes, missing, why))
        return missing ? HistoryLoadResult{Status::Missing, "", 0, ""} : invalid(why);
    if (bytes.size() < kHeaderBytes + sizeof(uint32_t))
        return invalid("file is truncated");
    if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return invalid("not a pg_storage_wait history file");
    uint32_t stored_crc = 0;
    std::memcpy(&stored_crc, bytes.data() + bytes.size() - sizeof stored_crc, sizeof stored_crc);
    Reader in(bytes.data() + sizeof kMagic, bytes.size() - sizeof kMagic - sizeof stored_crc);
    uint32_t version = 0, byte_order = 0, record_size = 0, entry_size = 0, ring_count = 0;
    uint64_t system_identifier = 0;
    int64_t saved_at_us = 0;
    in.get(version);
    if (version != kHistoryFormatVersion && version != kHistoryNamelessFormatVersion)
        return invalid(format_mismatch(version));
    in.get(byte_order), in.get(record_size), in.get(entry_size), in.get(ring_count);
    in.get(system_identifier), in.get(saved_at_us);
    if (byte_order != kByteOrderMark)
        return invalid("written on a machine of another byte order");
    if (record_size != sizeof(IntervalRecord) || entry_size != sizeof(ArenaEntry) ||
        ring_count != kRingCount)
        return invalid("written by an incompatible build (record layout differs)");
    if (crc32(bytes.data(), bytes.size() - sizeof stored_crc) != stored_crc)
        return invalid("checksum mismatch (file is corrupt or truncated)");
    if (system_identifier != owner.system_identifier)
        return invalid("written by another server (system identifier " +
                       std::to_string(system_identifier) + ", this server's is " +
                       std::to_string(owner.system_identifier) + ")");
    SavedRing saved_ticks, saved_rollups;
    int64_t newest = saved_at_us;
    if (!parse_ring(in, saved_ticks, newest, why) || !parse_ring(in, saved_rollups, newest, why))
        return invalid(why);
    const bool nameless = version == kHistoryNamelessFormatVersion;
    std::vector<NameSlot> table;
    if (!nameless && !parse_names(in, table, why))
        return invalid(why);
    if (in.left() != 0)
        return invalid(nameless ? "unexpected bytes after the last ring"
                                : "unexpected bytes after the name table");
    if (newest > owner.now_us + kHistoryFutureSlackUs)
        return invalid("its newest record is " + std::to_string((newest - owner.now_us) / 1000000) +
                       " s after the current time: the wall clock was set back since the save");
    // Oldest first; a smaller ring simply keeps the newest that fit.
    saved_ticks.keep = std::min<size_t>(saved_ticks.records.size(), ticks.record_capacity() - 1);
    saved_rollups.keep =
        std::min<size_t>(saved_rollups.records.size(), rollups.record_capacity() - 1);
    NameRemap remap(nameless ? nullptr : &table);
    if (!remap.scan(saved_ticks, why) || !remap.scan(saved_rollups, why))
        return invalid(why);
    // Names before the records that refer to them.
    remap.restore(names);
    restore_ring(ticks, saved_ticks, remap);
    restore_ring(rollups, saved_rollups, remap);
    return {Status::Loaded, "", saved_ticks.records.size() + saved_rollups.records.size(),
            nameless ? nameless_warning() : ""};
}

}  // namespace pgsw
