#include "core/history_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <unistd.h>

namespace pgsw {
namespace {

constexpr char kMagic[8] = {'P', 'G', 'S', 'W', 'H', 'I', 'S', 'T'};
constexpr uint32_t kRingCount = 2;

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

class Writer {
  public:
    void put(const void *data, size_t n) {
        const auto *p = static_cast<const char *>(data);
        bytes_.insert(bytes_.end(), p, p + n);
    }
    template <typename T>
    void put_value(const T &v) {
        put(&v, sizeof v);
    }
    std::vector<char> &bytes() { return bytes_; }

  private:
    std::vector<char> bytes_;
};

void put_ring(Writer &out, const Ring &ring) {
    std::vector<RecordCopy> copies;
    RecordCopy copy;
    for (uint64_t no = ring.first_readable(); no < ring.end(); ++no)
        if (ring.read(no, copy) == ReadStatus::Ok)
            copies.push_back(copy);
    out.put_value<uint64_t>(copies.size());
    for (const RecordCopy &c : copies) {
        out.put_value(c.record);
        out.put(c.entries.data(), c.entries.size() * sizeof(ArenaEntry));
    }
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
        std::memcpy(out, data_, n);
        data_ += n;
        left_ -= n;
        return true;
    }
    size_t left() const { return left_; }

  private:
    const char *data_;
    size_t left_;
};

// Parse one ring's records; fails without side effects.
bool parse_ring(Reader &in, std::vector<RecordCopy> &out, std::string &why) {
    uint64_t count = 0;
    if (!in.get(count))
        return why = "truncated ring header", false;
    if (count > in.left() / sizeof(IntervalRecord))
        return why = "record count exceeds file", false;
    out.resize(count);
    for (RecordCopy &c : out) {
        if (!in.get(c.record))
            return why = "truncated record", false;
        const IntervalRecord &r = c.record;
        const uint64_t n = entry_count(r);
        if (n > in.left() / sizeof(ArenaEntry))
            return why = "entry count exceeds file", false;
        c.entries.resize(n);
        if (!in.get_bytes(c.entries.data(), n * sizeof(ArenaEntry)))
            return why = "truncated entries", false;
    }
    return true;
}

void restore_ring(Ring &ring, const std::vector<RecordCopy> &records) {
    // Oldest first; a smaller ring simply keeps the newest that fit.
    const size_t keep = std::min<size_t>(records.size(), ring.record_capacity() - 1);
    for (size_t i = records.size() - keep; i < records.size(); ++i)
        ring.append(records[i].record, records[i].entries.data(), records[i].entries.size());
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

std::string save_history(const std::string &path, const Ring &ticks, const Ring &rollups) {
    Writer out;
    out.put(kMagic, sizeof kMagic);
    out.put_value<uint32_t>(kHistoryFormatVersion);
    out.put_value<uint32_t>(sizeof(IntervalRecord));
    out.put_value<uint32_t>(sizeof(ArenaEntry));
    out.put_value<uint32_t>(kRingCount);
    put_ring(out, ticks);
    put_ring(out, rollups);
    out.put_value<uint32_t>(crc32(out.bytes().data(), out.bytes().size()));

    const std::string tmp = path + ".tmp";
    std::FILE *file = std::fopen(tmp.c_str(), "wb");
    if (file == nullptr)
        return "could not create \"" + tmp + "\": " + std::strerror(errno);
    const bool written =
        std::fwrite(out.bytes().data(), 1, out.bytes().size(), file) == out.bytes().size() &&
        std::fflush(file) == 0 && fsync(fileno(file)) == 0;
    const int write_errno = errno;
    if (std::fclose(file) != 0 || !written) {
        std::remove(tmp.c_str());
        return "could not write \"" + tmp + "\": " + std::strerror(write_errno);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
        return "could not rename \"" + tmp + "\": " + std::strerror(errno);
    return "";
}

HistoryLoadResult load_history(const std::string &path, Ring &ticks, Ring &rollups) {
    using Status = HistoryLoadResult::Status;
    std::ifstream file(path, std::ios::binary);
    if (!file)
        return {Status::Missing, "", 0};
    const std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
    auto invalid = [](std::string why) { return HistoryLoadResult{Status::Invalid, why, 0}; };
    if (bytes.size() < sizeof kMagic + 4 * sizeof(uint32_t) + sizeof(uint32_t))
        return invalid("file is truncated");
    if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
        return invalid("not a pg_storage_wait history file");
    uint32_t stored_crc = 0;
    std::memcpy(&stored_crc, bytes.data() + bytes.size() - sizeof stored_crc, sizeof stored_crc);
    Reader in(bytes.data() + sizeof kMagic, bytes.size() - sizeof kMagic - sizeof stored_crc);
    uint32_t version = 0, record_size = 0, entry_size = 0, ring_count = 0;
    in.get(version), in.get(record_size), in.get(entry_size), in.get(ring_count);
    if (version != kHistoryFormatVersion)
        return invalid("format version " + std::to_string(version) + ", expected " +
                       std::to_string(kHistoryFormatVersion));
    if (record_size != sizeof(IntervalRecord) || entry_size != sizeof(ArenaEntry) ||
        ring_count != kRingCount)
        return invalid("written by an incompatible build (record layout differs)");
    if (crc32(bytes.data(), bytes.size() - sizeof stored_crc) != stored_crc)
        return invalid("checksum mismatch (file is corrupt or truncated)");
    std::vector<RecordCopy> tick_records, rollup_records;
    std::string why;
    if (!parse_ring(in, tick_records, why) || !parse_ring(in, rollup_records, why))
        return invalid(why);
    if (in.left() != 0)
        return invalid("unexpected bytes after the last ring");
    restore_ring(ticks, tick_records);
    restore_ring(rollups, rollup_records);
    return {Status::Loaded, "", tick_records.size() + rollup_records.size()};
}

}  // namespace pgsw
