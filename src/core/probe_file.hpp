#include "core/cpp_only.hpp"
#pragma once
// The probe file: a file of pg_storage_wait's own on a device, read one random 8 kB block at a
// time with O_DIRECT (core/probe.hpp). Plain system calls, no PostgreSQL.
//
// What it must be, and why:
//  * Real blocks. A sparse file's holes, and extents reserved by fallocate() but never written
//    ("unwritten" on ext4/XFS), read as zeros without touching the device: a probe there would
//    time the file system's metadata. The file is written in full, once, with pseudo-random
//    bytes (not zeros, which a compressing or deduplicating layer would store as nothing), then
//    fdatasync'ed; a file found with fewer allocated blocks than its size is written again.
//  * 256 MB (kProbeFileBytes). Large enough that the reads are not served from a device's own
//    cache: a disk's cache is 64-256 MB and mostly holds read-ahead, an SSD's DRAM holds its
//    mapping table, a cloud volume has none the guest can hit; 32,768 blocks, so at one read a
//    second a block comes back about once in nine hours. Small enough not to matter beside the
//    data: a quarter of the WAL that PostgreSQL's default max_wal_size (1 GB) keeps. A
//    storage array with a cache of gigabytes may still serve some probes from it.
//  * Written once, atomically: into NAME.tmp, fdatasync, renamed to NAME, directory fsync'ed.
//    A later start reuses it (size and allocated blocks checked).
//  * Read with O_DIRECT into a 4 kB-aligned buffer. A file system that refuses O_DIRECT answers
//    the open with EINVAL (tmpfs before Linux 6.6, some FUSE file systems): the probe then says
//    so instead of timing the page cache.
#include <cstddef>
#include <cstdint>
#include <string>

namespace pgsw {

constexpr uint64_t kProbeFileBytes = uint64_t{256} << 20;
constexpr size_t kProbeReadBytes = 8192;
constexpr size_t kProbeAlignment = 4096;
constexpr size_t kProbeWriteChunk = size_t{1} << 20;  // O_DIRECT writes while creating

struct ProbeOpenResult {
    bool ok = false;
    bool refused = false;  // the file system refuses O_DIRECT
    bool created = false;  // the file was written now (else an existing one was reused)
    std::string reason;    // why not ok
};

struct ProbeReadResult {
    bool ok = false;
    double latency_us = 0;
    int error = 0;  // errno of a failed read (EIO for a short one)
};

class ProbeFile {
  public:
    ProbeFile() = default;
    ~ProbeFile();
    ProbeFile(const ProbeFile &) = delete;
    ProbeFile &operator=(const ProbeFile &) = delete;

    // Opens `path` for O_DIRECT reads, first writing it (`bytes`, a multiple of
    // kProbeWriteChunk) when it is missing, of another size or not fully allocated. `stop` is
    // polled between chunks: true abandons the creation (shutdown). May allocate.
    ProbeOpenResult open_or_create(const std::string &path, uint64_t bytes,
                                   bool (*stop)() = nullptr);
    // One random block, timed with CLOCK_MONOTONIC around the pread. Allocates nothing.
    ProbeReadResult read_random(uint64_t &rng) noexcept;
    void close() noexcept;
    bool is_open() const noexcept { return fd_ >= 0; }
    const std::string &path() const noexcept { return path_; }

  private:
    ProbeOpenResult open_existing(const std::string &path, uint64_t bytes, bool &usable);
    ProbeOpenResult create(const std::string &path, uint64_t bytes, bool (*stop)());

    int fd_ = -1;
    uint64_t blocks_ = 0;
    void *buffer_ = nullptr;  // kProbeReadBytes, kProbeAlignment-aligned
    std::string path_;
};

// xorshift64*: the block to read, and the file's contents. `state` must not be 0.
uint64_t probe_random(uint64_t &state) noexcept;
// "what path: strerror" with the O_DIRECT case named (EINVAL on open).
std::string probe_error_reason(const char *what, const std::string &path, int error);
// Allocated blocks cover the size (st_blocks is in 512-byte units).
inline bool probe_file_allocated(uint64_t size, uint64_t blocks_512, uint64_t bytes) noexcept {
    return size == bytes && blocks_512 * 512 >= bytes;
}

}  // namespace pgsw
