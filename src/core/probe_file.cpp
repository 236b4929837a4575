#include "core/probe_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

namespace pgsw {
namespace {

struct FreeDeleter {
    void operator()(void *p) const noexcept { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<void, FreeDeleter>;

AlignedBuffer aligned_buffer(size_t bytes) {
    void *p = std::aligned_alloc(kProbeAlignment, bytes);
    if (p == nullptr)
        throw std::bad_alloc();
    return AlignedBuffer(p);
}

// A file descriptor closed on every path out.
struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0)
            ::close(fd);
    }
};

double monotonic_us() noexcept {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) / 1e3;
}

std::string directory_of(const std::string &path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

void fill_random(void *buffer, size_t bytes, uint64_t &rng) noexcept {
    auto *words = static_cast<uint64_t *>(buffer);
    for (size_t i = 0; i < bytes / sizeof(uint64_t); ++i)
        words[i] = probe_random(rng);
}

}  // namespace

uint64_t probe_random(uint64_t &state) noexcept {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545F4914F6CDD1DULL;
}

std::string probe_error_reason(const char *what, const std::string &path, int error) {
    if (error == EINVAL)
        return "the file system refuses O_DIRECT (EINVAL) for " + path +
               ": a read there would time the page cache, not the device";
    return std::string(what) + " " + path + ": " + std::strerror(error);
}

ProbeFile::~ProbeFile() {
    close();
}

void ProbeFile::close() noexcept {
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
    std::free(buffer_);
    buffer_ = nullptr;
    blocks_ = 0;
}

ProbeOpenResult ProbeFile::open_or_create(const std::string &path, uint64_t bytes, bool (*stop)()) {
    close();
    path_ = path;
    bool usable = false;
    ProbeOpenResult r = open_existing(path, bytes, usable);
    if (usable || r.refused)
        return r;
    r = create(path, bytes, stop);
    if (!r.ok)
        return r;
    r = open_existing(path, bytes, usable);
    r.created = true;
    if (r.ok && !usable) {
        close();
        r.ok = false;
        r.reason = "the probe file " + path + " was written but is not fully allocated";
    }
    return r;
}

// Opens an existing file; `usable` when it has the size and its blocks.
ProbeOpenResult ProbeFile::open_existing(const std::string &path, uint64_t bytes, bool &usable) {
    ProbeOpenResult r;
    usable = false;
    Fd fd{::open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC)};
    if (fd.fd < 0) {
        const int err = errno;
        r.refused = err == EINVAL;
        r.reason = probe_error_reason("cannot open the probe file", path, err);
        return r;
    }
    struct stat st;
    if (fstat(fd.fd, &st) != 0 ||
        !probe_file_allocated(uint64_t(st.st_size), uint64_t(st.st_blocks), bytes))
        return r;  // missing blocks or another size: to be written again
    AlignedBuffer buffer = aligned_buffer(kProbeReadBytes);
    fd_ = fd.fd, fd.fd = -1;
    buffer_ = buffer.release();
    blocks_ = bytes / kProbeReadBytes;
    usable = true;
    r.ok = true;
    return r;
}

// Writes NAME.tmp in full with O_DIRECT, syncs it and renames it to NAME.
ProbeOpenResult ProbeFile::create(const std::string &path, uint64_t bytes, bool (*stop)()) {
    ProbeOpenResult r;
    const std::string tmp = path + ".tmp";
    Fd fd{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT | O_CLOEXEC, 0600)};
    if (fd.fd < 0) {
        const int err = errno;
        (void)::unlink(tmp.c_str());  // an O_DIRECT refusal may come after the file was made
        r.refused = err == EINVAL;
        r.reason = probe_error_reason("cannot create the probe file", tmp, err);
        return r;
    }
    AlignedBuffer chunk = aligned_buffer(kProbeWriteChunk);
    uint64_t rng = uint64_t(getpid()) * 0x9E3779B97F4A7C15ULL ^ uint64_t(time(nullptr));
    rng = rng != 0 ? rng : 1;
    int err = 0;
    for (uint64_t at = 0; at < bytes && err == 0; at += kProbeWriteChunk) {
        if (stop != nullptr && stop()) {
            (void)::unlink(tmp.c_str());
            r.reason = "stopped while writing the probe file " + tmp;
            return r;
        }
        fill_random(chunk.get(), kProbeWriteChunk, rng);
        const ssize_t n = pwrite(fd.fd, chunk.get(), kProbeWriteChunk, off_t(at));
        err = n < 0 ? errno : size_t(n) != kProbeWriteChunk ? ENOSPC : 0;
    }
    if (err == 0 && fdatasync(fd.fd) != 0)
        err = errno;
    if (err == 0 && rename(tmp.c_str(), path.c_str()) != 0)
        err = errno;
    if (err != 0) {
        (void)::unlink(tmp.c_str());
        r.refused = err == EINVAL;
        r.reason = probe_error_reason("cannot write the probe file", tmp, err);
        return r;
    }
    Fd dir{::open(directory_of(path).c_str(), O_RDONLY | O_CLOEXEC)};
    if (dir.fd >= 0)
        (void)fsync(dir.fd);  // the rename is durable; the file is remade if it was not
    r.ok = true;
    return r;
}

ProbeReadResult ProbeFile::read_random(uint64_t &rng) noexcept {
    ProbeReadResult r;
    if (fd_ < 0 || blocks_ == 0) {
        r.error = EBADF;
        return r;
    }
    const off_t offset = off_t((probe_random(rng) % blocks_) * kProbeReadBytes);
    const double started = monotonic_us();
    const ssize_t n = pread(fd_, buffer_, kProbeReadBytes, offset);
    const double ended = monotonic_us();
    if (n != ssize_t(kProbeReadBytes)) {
        r.error = n < 0 ? errno : EIO;
        return r;
    }
    r.ok = true;
    r.latency_us = ended - started;
    return r;
}

}  // namespace pgsw
